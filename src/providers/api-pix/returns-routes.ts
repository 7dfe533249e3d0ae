import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { run, sql } from '../../db/sql.ts';
import type { Fact } from '../../domain/provider-facts.ts';
import { OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import { PageQuery, pageRequest } from '../../http/paging.ts';
import { operatorSecurity, type Router, StringEnum } from '../../http/router.ts';
import type { StoredEvent } from '../events/store.ts';

const Returned = Type.Object(
  {
    endToEndId: Type.String(),
    txid: Type.Union([Type.String(), Type.Null()]),
    amount: Type.Integer({ description: 'cents' }),
    transactionId: Type.Union([Type.Integer(), Type.Null()]),
    reason: Type.String({ description: 'why it could not pay its sale' }),
    status: StringEnum(['TO_SEND', 'EM_PROCESSAMENTO', 'DEVOLVIDO', 'NAO_REALIZADO'] as const, {
      description: 'the devolução: TO_SEND until the PSP has it',
    }),
    detail: Type.Union([Type.String(), Type.Null()], { description: "the PSP's motivo, when it gave one" }),
    paidAt: Type.String({ format: 'date-time' }),
    receivedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'PixReturn', description: 'A Pix received that paid no sale, returned whole by a devolução' },
);

/** `GET /admin/pix/returns`: the Pix the gateway returned whole (CONTRACT §11.1), newest first. */
export async function pixAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.get(
    '/admin/pix/returns',
    {
      schema: {
        operationId: 'listPixReturns',
        summary: 'Pix returned whole: for a sale no longer PENDENTE, another amount or an unknown txid (newest first)',
        tags: ['operator'],
        security: operatorSecurity,
        querystring: Type.Object({ limit: PageQuery.limit }),
        response: responses({ 200: Type.Object({ data: Type.Array(Returned) }, { title: 'PixReturnList' }) }, [
          ...OPERATOR_ERRORS,
          ['VALIDATION_ERROR', '`limit` is not an integer from 1 to 100'],
        ]),
      },
    },
    async (request) => {
      const rows = await run<StoredEvent>(
        ctx.db,
        sql`SELECT * FROM provider_events WHERE provider = 'api-pix' AND kind = 'PIX_RECEIVED' AND followup = 'RETURN'
            ORDER BY received_at DESC, external_reference LIMIT ${pageRequest(request.query).limit}`,
      );
      return { data: rows.rows.map(pixReturnView) };
    },
  );
}

const return_status = { TO_SEND: 'TO_SEND', SENT: 'EM_PROCESSAMENTO', DONE: 'DEVOLVIDO', REFUSED: 'NAO_REALIZADO' } as const;

function pixReturnView(e: StoredEvent) {
  const fact = e.fact as Extract<Fact, { kind: 'PIX_RECEIVED' }>;
  return {
    endToEndId: e.external_reference,
    txid: fact.txid,
    amount: Number(e.amount),
    transactionId: e.transaction_id === null ? null : Number(e.transaction_id),
    reason: e.reason ?? '',
    status: return_status[e.followup_status ?? 'TO_SEND'],
    detail: e.followup_detail,
    paidAt: new Date(fact.paidAt).toISOString(),
    receivedAt: e.received_at.toISOString(),
  };
}
