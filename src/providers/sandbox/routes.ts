import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import { BOLETO_MAX_AMOUNT_CENTS } from '../../domain/boleto.ts';
import { ApiError } from '../../domain/errors.ts';
import { BODY_ERRORS, OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import { Fields, operatorSecurity, type Router } from '../../http/router.ts';

/**
 * `POST /sandbox/pix/{txid}/pay` (operator, PIX_PROVIDER=sandbox): the embedded PSP receives a Pix as
 * a payer's bank would, and calls the gateway back like a PSP (CONTRACT §11.1).
 */
export async function sandboxPixRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/sandbox/pix/:txid/pay',
    {
      schema: {
        operationId: 'sandboxPayPix',
        summary: 'Sandbox: pay a PIX charge as a payer would (the embedded PSP calls the gateway back)',
        description:
          "PIX_PROVIDER=sandbox only. Answers the Pix once the gateway has answered the PSP's callback: a Pix of the sale's amount on a PENDENTE sale " +
          'pays it (PAGO); any other is returned whole by a devolução (GET /admin/pix/returns).',
        tags: ['operator'],
        security: operatorSecurity,
        params: Type.Object({ txid: Type.String({ pattern: '^[A-Za-z0-9]{1,35}$', description: "the sale's externalTransactionId" }) }),
        body: Fields(
          {
            amount: Type.Optional(
              Type.Integer({ minimum: 1, maximum: BOLETO_MAX_AMOUNT_CENTS, description: "an integer of cents from 1 (default: the sale's amount)" }),
            ),
          },
          { title: 'SandboxPixPayment' },
        ),
        bodyExamples: {
          saleAmount: { summary: "The sale's amount: the sale becomes PAGO", value: {} },
          amount: { summary: "A given amount, in cents (another than the sale's is returned whole)", value: { amount: 15000 } },
        },
        response: responses(
          {
            200: Type.Object(
              {
                endToEndId: Type.String(),
                txid: Type.Optional(Type.String()),
                valor: Type.String({ description: 'reais with two decimals, as the API Pix writes them' }),
                componentesValor: Type.Optional(Type.Object({ original: Type.Object({ valor: Type.String() }) })),
                chave: Type.Optional(Type.String({ description: "the receiver's PIX key" })),
                horario: Type.String({ format: 'date-time' }),
                infoPagador: Type.Optional(Type.String()),
              },
              { title: 'SandboxPix', description: 'the Pix as the PSP received it (an API Pix `Pix` object)', additionalProperties: true },
            ),
          },
          [
            ...OPERATOR_ERRORS,
            ...BODY_ERRORS,
            ['VALIDATION_ERROR', '`txid` is not 1 to 35 letters and digits, or `amount` breaks its rule'],
            ['BAD_REQUEST', 'the URL is malformed (bad percent-encoding, a path segment over 100 characters)'],
            ['NOT_FOUND', 'the sandbox PSP is not running (PIX_PROVIDER is not sandbox), or no PIX sale has this txid and no amount was given'],
          ],
        ),
      },
    },
    async (request) => {
      const psp = ctx.providers.sandboxPix;
      if (!psp) throw new ApiError('NOT_FOUND', 'The sandbox PSP runs only with PIX_PROVIDER=sandbox');
      const sale = maybeOne(
        await run<{ amount: number }>(
          ctx.db,
          sql`SELECT amount FROM transactions WHERE pix_txid = ${request.params.txid} AND payment_method = 'PIX'`,
        ),
      );
      const amount = request.body.amount ?? sale?.amount;
      if (amount === undefined) throw new ApiError('NOT_FOUND', 'No PIX sale has this txid; give an amount to pay it anyway');
      return psp.pay(request.params.txid, Number(amount));
    },
  );
}
