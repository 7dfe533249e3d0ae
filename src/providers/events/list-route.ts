import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { PROVIDER_NAMES } from '../../domain/provider-facts.ts';
import { OPERATOR_ERRORS, PAGE_ERRORS, responses } from '../../http/openapi.ts';
import { PageQuery, pageAnswer, pageOf, pageRequest } from '../../http/paging.ts';
import { operatorSecurity, type Router, StringEnum } from '../../http/router.ts';
import { FACT_STATES, ProviderEvent, providerEventView } from './event-view.ts';
import { listEvents } from './store.ts';

const ListQuery = Type.Object({ state: Type.Optional(StringEnum(FACT_STATES)), provider: Type.Optional(StringEnum(PROVIDER_NAMES)), ...PageQuery });

/** `GET /admin/provider-events` (CONTRACT §14): every fact providers told the gateway, newest first. */
export async function listProviderEventsRoute(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/admin/provider-events',
    {
      schema: {
        operationId: 'listProviderEvents',
        summary: 'What providers told the gateway, newest first: applied, held until the sale can move, or left for the operator',
        tags: ['operator'],
        security: operatorSecurity,
        querystring: ListQuery,
        response: responses({ 200: pageOf(ProviderEvent, 'ProviderEventPage') }, [
          ...OPERATOR_ERRORS,
          ...PAGE_ERRORS,
          ['VALIDATION_ERROR', '`state` or `provider` is not one of its values'],
        ]),
      },
    },
    async (request) => {
      const { limit, fetch, beforeId } = pageRequest(request.query);
      const rows = await listEvents(ctx.db, { state: request.query.state, provider: request.query.provider, beforeId, limit: fetch });
      return pageAnswer(
        rows.map((r) => ({ ...r, id: Number(r.id) })),
        limit,
        (page) => page.map(providerEventView),
      );
    },
  );
}
