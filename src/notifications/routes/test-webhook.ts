import type { AppContext } from '../../context.ts';
import type { ApiError } from '../../domain/errors.ts';
import { type Refusal, refusalError } from '../../domain/result.ts';
import { parsePathId } from '../../http/ids.ts';
import { BODY_ERRORS, NO_FIELDS, owned, responses, SELLER_ERRORS } from '../../http/openapi.ts';
import { NoBody, PathId, type Router } from '../../http/router.ts';
import { Notification } from '../notification-view.ts';
import { sendTestNotification, tests_retry_after_s } from '../webhook-test.ts';
import { common } from './common.ts';

/** Over the limit, Retry-After tells the seller when the minute's tests no longer count. */
function testRefusalError(refusal: Refusal): ApiError {
  const error = refusalError(refusal);
  if (refusal.code === 'RATE_LIMITED') error.retryAfterSeconds = tests_retry_after_s;
  return error;
}

export function testWebhookRoute(app: Router, ctx: AppContext): void {
  app.post(
    '/api/webhooks/:id/test',
    {
      schema: {
        ...common,
        operationId: 'testWebhook',
        summary: 'Send one test notification (the panel\'s "Enviar teste")',
        description:
          "One notification of the webhook's type with a fixed sample body (a TRANSACTION sample for a webhook of both types), " +
          'in the shape of the real one, marked by the header X-Test-Event: true; queued and delivered like any other, ' +
          'listed in the delivery log with `test: true` and `resourceId: null`, resendable.',
        params: PathId,
        body: NoBody,
        response: responses({ 202: Notification }, [
          ...SELLER_ERRORS,
          ...BODY_ERRORS,
          ...NO_FIELDS,
          ...owned('webhook'),
          ['RATE_LIMITED', 'more than 10 test notifications in the last minute'],
        ]),
      },
    },
    async (request, reply) => {
      const sent = await sendTestNotification(ctx, request.sellerId, parsePathId(request.params.id), ctx.clock.now());
      if (!sent.ok) throw testRefusalError(sent.refusal);
      return reply.status(202).send(sent.value);
    },
  );
}
