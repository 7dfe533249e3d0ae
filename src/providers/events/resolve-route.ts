import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../domain/errors.ts';
import { parsePathId } from '../../http/ids.ts';
import { BODY_ERRORS, existing, OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import { Fields, operatorSecurity, PathId, type Router } from '../../http/router.ts';
import { ProviderEvent, providerEventView } from './event-view.ts';
import { resolveEvent } from './store.ts';

/** `POST /admin/provider-events/{id}/resolve` (CONTRACT §14): a needs_operator fact handled, kept with the note. */
export async function resolveProviderEventRoute(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/admin/provider-events/:id/resolve',
    {
      schema: {
        operationId: 'resolveProviderEvent',
        summary: 'Mark a provider event that needs the operator as handled',
        description: 'Only a needs_operator event not yet resolved can be resolved; it is kept, with the note and when.',
        tags: ['operator'],
        security: operatorSecurity,
        params: PathId,
        body: Fields(
          { note: Type.String({ minLength: 1, maxLength: 2000, description: 'what the operator did' }) },
          { title: 'ProviderEventResolution' },
        ),
        bodyExamples: {
          returned: { summary: 'The money was returned to the payer at the provider', value: { note: 'Devolvido ao pagador pelo portal do PSP' } },
        },
        response: responses({ 200: ProviderEvent }, [
          ...OPERATOR_ERRORS,
          ...BODY_ERRORS,
          'VALIDATION_ERROR',
          ...existing('provider event'),
          ['INVALID_TRANSITION', 'the event is applied or held, or was already resolved'],
        ]),
      },
    },
    async (request) => {
      const id = parsePathId(request.params.id);
      const r = await ctx.db.tx((q) => resolveEvent(q, id, request.body.note, ctx.clock.now()));
      if (r.kind === 'not_found') throw new ApiError('NOT_FOUND', 'Provider event not found');
      if (r.kind === 'wrong_state')
        throw new ApiError(
          'INVALID_TRANSITION',
          `Only a needs_operator event not yet resolved can be resolved; this one is ${r.event.resolved_at ? 'resolved' : r.event.state}`,
        );
      return providerEventView(r.event);
    },
  );
}
