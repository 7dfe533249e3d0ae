import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import { BOLETO_MAX_AMOUNT_CENTS } from '../../domain/boleto.ts';
import { ApiError } from '../../domain/errors.ts';
import { parsePathId } from '../../http/ids.ts';
import { BODY_ERRORS, OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import { Fields, operatorSecurity, PathId, type Router } from '../../http/router.ts';

const AMOUNT_BODY = {
  amount: Type.Optional(
    Type.Integer({ minimum: 1, maximum: BOLETO_MAX_AMOUNT_CENTS, description: "an integer of cents from 1 (default: the sale's amount)" }),
  ),
};

const SalePaid = Type.Object(
  { id: Type.Integer(), status: Type.String({ description: "the sale's status once the gateway took the PSP's word" }) },
  { title: 'SandboxSalePaid' },
);

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
        body: Fields(AMOUNT_BODY, { title: 'SandboxPixPayment' }),
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
      const psp = ctx.sandbox.pix;
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

/**
 * `POST /sandbox/boletos/{id}/pay` (operator, BOLETO_PROVIDER=sandbox): a bank pays the boleto of
 * sale `id` at the embedded PSP, which notifies the gateway as Efí does (CONTRACT §11.4).
 */
export async function sandboxBoletoRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/sandbox/boletos/:id/pay',
    {
      schema: {
        operationId: 'sandboxPayBoleto',
        summary: "Sandbox: pay a boleto as a payer's bank would (the embedded PSP notifies the gateway)",
        description:
          "BOLETO_PROVIDER=sandbox only. Answers once the gateway has read the PSP's notification: the boleto's value on a PENDENTE sale " +
          'pays it (PAGO); a payment the sale cannot take (another value, a cancelled sale) is left to the operator (GET /admin/provider-events).',
        tags: ['operator'],
        security: operatorSecurity,
        params: PathId,
        body: Fields(AMOUNT_BODY, { title: 'SandboxBoletoPayment' }),
        bodyExamples: {
          saleAmount: { summary: "The sale's amount: the sale becomes PAGO", value: {} },
          amount: { summary: 'A given amount, in cents', value: { amount: 15000 } },
        },
        response: responses(
          {
            200: SalePaid,
          },
          [
            ...OPERATOR_ERRORS,
            ...BODY_ERRORS,
            ['VALIDATION_ERROR', '`amount` breaks its rule'],
            ['BAD_REQUEST', '`id` is not a positive integer, or the URL is malformed'],
            ['NOT_FOUND', 'the sandbox PSP does not issue boletos here (BOLETO_PROVIDER is not sandbox), or no sale with this id has a boleto there'],
            ['INVALID_TRANSITION', 'the boleto was paid already'],
          ],
        ),
      },
    },
    async (request) => {
      const id = parsePathId(request.params.id);
      const sale = await saleToPay(ctx, id);
      if (sale?.payment_method !== 'BOLETO') throw new ApiError('NOT_FOUND', 'No boleto sale registered at the sandbox PSP has this id');
      return payBoleto(ctx, sale, request.body.amount);
    },
  );
}

/**
 * `POST /sandbox/sales/{id}/pay` (operator): pays sale `id` as its payer would, whatever its method
 * takes — its PIX charge at the embedded PSP, or its boleto at the embedded bank — so a tester needs
 * only the id the create answer gave.
 */
export async function sandboxSaleRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/sandbox/sales/:id/pay',
    {
      schema: {
        operationId: 'sandboxPaySale',
        summary: 'Sandbox: pay a PIX or boleto sale by its id, as its payer would',
        description:
          "PIX_PROVIDER=sandbox for PIX sales, BOLETO_PROVIDER=sandbox for boletos. Answers once the gateway has taken the PSP's word: " +
          "the sale's amount on a PENDENTE sale pays it (PAGO); a PIX of another amount is returned whole by a devolução, a boleto " +
          'payment the sale cannot take is left to the operator (GET /admin/provider-events). Card sales are paid by their authorisation, not here.',
        tags: ['operator'],
        security: operatorSecurity,
        params: PathId,
        body: Fields(AMOUNT_BODY, { title: 'SandboxSalePayment' }),
        bodyExamples: {
          saleAmount: { summary: "The sale's amount: the sale becomes PAGO", value: {} },
          amount: { summary: "A given amount, in cents (another than the sale's is not taken)", value: { amount: 15000 } },
        },
        response: responses({ 200: SalePaid }, [
          ...OPERATOR_ERRORS,
          ...BODY_ERRORS,
          ['VALIDATION_ERROR', '`amount` breaks its rule'],
          ['BAD_REQUEST', '`id` is not a positive integer, or the URL is malformed'],
          ['NOT_FOUND', 'no sale has this id, or its rail is not the sandbox here'],
          ['INVALID_TRANSITION', 'a card sale (paid by its authorisation), or a boleto paid already'],
        ]),
      },
    },
    async (request) => {
      const id = parsePathId(request.params.id);
      const sale = await saleToPay(ctx, id);
      if (!sale) throw new ApiError('NOT_FOUND', 'No sale has this id');
      const amount = request.body.amount;
      if (sale.payment_method === 'BOLETO') return payBoleto(ctx, sale, amount);
      if (sale.payment_method !== 'PIX')
        throw new ApiError('INVALID_TRANSITION', 'A card sale is paid by its authorisation; the sandbox moves it by itself (SANDBOX_AUTOPILOT)');
      const psp = ctx.sandbox.pix;
      if (!psp || sale.pix_txid === null || !playedBySandbox(ctx, sale))
        throw new ApiError('NOT_FOUND', 'The sandbox PSP pays only the sales it charged (PIX_PROVIDER=sandbox)');
      await psp.pay(sale.pix_txid, amount ?? sale.amount);
      return { id, status: (await saleToPay(ctx, id))!.status };
    },
  );
}

interface SaleToPay {
  id: number;
  status: string;
  amount: number;
  payment_method: string;
  account: string | null;
  pix_txid: string | null;
  external_transaction_id: string;
}

async function saleToPay(ctx: AppContext, id: number): Promise<SaleToPay | null> {
  return maybeOne(
    await run<SaleToPay>(
      ctx.db,
      sql`SELECT id, status, amount, payment_method, account, pix_txid, external_transaction_id FROM transactions WHERE id = ${id}`,
    ),
  );
}

/** A sale made with an account the sandbox plays (a real PSP's sale is never paid by the sandbox). */
const playedBySandbox = (ctx: AppContext, sale: SaleToPay) => sale.account !== null && ctx.sandbox.accounts.includes(sale.account);

/** A bank pays the boleto at the embedded PSP; the answer waits for the gateway to read the notification. */
async function payBoleto(ctx: AppContext, sale: SaleToPay, amount: number | undefined) {
  const psp = ctx.sandbox.boleto;
  if (!psp || !playedBySandbox(ctx, sale))
    throw new ApiError('NOT_FOUND', 'The sandbox PSP pays only the boletos it issued (BOLETO_PROVIDER=sandbox)');
  try {
    await psp.pay(Number(sale.external_transaction_id), amount);
  } catch (error) {
    if ((error as { status?: number }).status === 400) throw new ApiError('INVALID_TRANSITION', 'The boleto was paid already');
    throw error;
  }
  return { id: sale.id, status: (await saleToPay(ctx, sale.id))!.status };
}
