import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { maybeOne } from '../db/sql.ts';
import { BOLETO_MAX_AMOUNT_CENTS } from '../domain/boleto.ts';
import { ApiError } from '../domain/errors.ts';
import { errorResponses, Fields, operatorSecurity, type Router } from '../http/router.ts';

/**
 * `POST /sandbox/pix/{txid}/pay` (operator, PIX_PROVIDER=sandbox): the embedded PSP receives a Pix as
 * a payer's bank would, and calls the gateway back like a PSP (CONTRACT §11.1).
 */
export async function sandboxPixRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/sandbox/pix/:txid/pay',
    {
      schema: {
        summary: 'Sandbox: pay a PIX charge as a payer would (the embedded PSP calls the gateway back)',
        tags: ['operator'],
        security: operatorSecurity,
        params: Type.Object({ txid: Type.String({ pattern: '^[A-Za-z0-9]{1,35}$', description: "the sale's externalTransactionId" }) }),
        body: Fields({
          amount: Type.Optional(
            Type.Integer({ minimum: 1, maximum: BOLETO_MAX_AMOUNT_CENTS, description: "an integer of cents from 1 (default: the sale's amount)" }),
          ),
        }),
        response: {
          200: Type.Object(
            { endToEndId: Type.String(), txid: Type.Optional(Type.String()), valor: Type.String(), horario: Type.String() },
            { description: 'the Pix as the PSP received it (API Pix Pix object)', additionalProperties: true },
          ),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const psp = ctx.pix.psp;
      if (!psp) throw new ApiError('NOT_FOUND', 'The sandbox PSP runs only with PIX_PROVIDER=sandbox');
      const sale = maybeOne(
        await ctx.db.query<{ amount: number }>("SELECT amount FROM transactions WHERE pix_txid = $1 AND payment_method = 'PIX'", [
          request.params.txid,
        ]),
      );
      const amount = request.body.amount ?? sale?.amount;
      if (amount === undefined) throw new ApiError('NOT_FOUND', 'No PIX sale has this txid; give an amount to pay it anyway');
      return psp.pay(request.params.txid, Number(amount));
    },
  );
}
