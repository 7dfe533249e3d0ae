import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { OPERATOR_ERRORS, responses } from '../http/openapi.ts';
import { PageQuery, pageRequest } from '../http/paging.ts';
import { iso, operatorSecurity, type Router, StringEnum } from '../http/router.ts';

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
      const rows = await ctx.db.query<{
        end_to_end_id: string;
        txid: string | null;
        amount: number;
        transaction_id: number | null;
        return_reason: string;
        return_status: 'TO_SEND' | 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
        return_detail: string | null;
        paid_at: Date;
        created_at: Date;
      }>("SELECT * FROM pix_received WHERE outcome = 'RETURNED' ORDER BY created_at DESC, end_to_end_id LIMIT $1", [
        pageRequest(request.query).limit,
      ]);
      return {
        data: rows.rows.map((r) => ({
          endToEndId: r.end_to_end_id,
          txid: r.txid,
          amount: Number(r.amount),
          transactionId: r.transaction_id === null ? null : Number(r.transaction_id),
          reason: r.return_reason,
          status: r.return_status,
          detail: r.return_detail,
          paidAt: iso(r.paid_at)!,
          receivedAt: iso(r.created_at)!,
        })),
      };
    },
  );
}
