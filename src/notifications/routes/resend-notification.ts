import type { AppContext } from '../../context.ts';
import { refusalError } from '../../domain/result.ts';
import { parsePathId } from '../../http/ids.ts';
import { BODY_ERRORS, NO_FIELDS, owned, responses, SELLER_ERRORS } from '../../http/openapi.ts';
import { NoBody, PathId, type Router } from '../../http/router.ts';
import { resendNotification } from '../delivery-log.ts';
import { Notification, notificationView } from '../notification-view.ts';
import { common } from './common.ts';

/** The delivery log's resend (CONTRACT §3). */
export function resendNotificationRoute(app: Router, ctx: AppContext): void {
  app.post(
    '/api/notifications/:id/resend',
    {
      schema: {
        ...common,
        operationId: 'resendNotification',
        summary: 'One more attempt now, whatever its status (same X-Event-Id)',
        params: PathId,
        body: NoBody,
        response: responses({ 202: Notification }, [...SELLER_ERRORS, ...BODY_ERRORS, ...NO_FIELDS, ...owned('notification')]),
      },
    },
    async (request, reply) => {
      const resent = await resendNotification(ctx.db, request.sellerId, parsePathId(request.params.id), ctx.clock.now());
      if (!resent.ok) throw refusalError(resent.refusal);
      return reply.status(202).send(notificationView(resent.value));
    },
  );
}
