import type { AppContext } from '../context.ts';
import { CashoutBody } from '../domain/cashout-request.ts';
import { CASHOUT_EVENTS } from '../domain/cashout-states.ts';
import { ApiError } from '../domain/errors.ts';
import { sendAnswer } from '../http/idempotency.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, type BodyExample, existing, IDEMPOTENCY_ERRORS, OPERATOR_ERRORS, owned, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { Fields, IdempotencyHeaders, operatorSecurity, PathId, type Router, StringEnum, sellerSecurity } from '../http/router.ts';
import { Cashout, CashoutRead, cashoutReadView, cashoutView } from './cashout-view.ts';
import { findCashout } from './cashouts-repo.ts';
import { requestCashout } from './request-cashout.ts';
import { moveCashout } from './transitions.ts';

// One per key type, in the forms the DICT accepts (check digits valid); each is answered with the key normalised.
const cashoutExamples: Record<string, BodyExample> = {
  cpf: {
    summary: 'To a CPF key (punctuation allowed), R$ 150,50 as a number',
    value: { amount: 150.5, pixKey: '529.982.247-25', pixKeyType: 'CPF' },
  },
  cnpj: { summary: 'To a CNPJ key, R$ 1.000,00 as a string', value: { amount: '1000.00', pixKey: '11.222.333/0001-81', pixKeyType: 'CNPJ' } },
  email: { summary: 'To an e-mail key', value: { amount: 250, pixKey: 'financeiro@loja.example.com', pixKeyType: 'EMAIL' } },
  phone: {
    summary: 'To a phone key: +55, the area code and a mobile number',
    value: { amount: '320.75', pixKey: '+5511987654321', pixKeyType: 'PHONE' },
  },
  random: {
    summary: 'To a random key (EVP): a UUID',
    value: { amount: 100, pixKey: '123e4567-e12b-12d1-a456-426655440000', pixKeyType: 'RANDOM' },
  },
};

export async function cashoutRoutes(app: Router, ctx: AppContext): Promise<void> {
  const common = { tags: ['cashout'], security: sellerSecurity };

  app.post(
    '/api/public/cashout',
    {
      schema: {
        ...common,
        operationId: 'createCashout',
        summary: 'Pay out available balance to a PIX key',
        description:
          'Checks in this order, the first failure answers: the body (400), the key for its type (400 INVALID_PIX_KEY), the account (403), the amount (422). ' +
          'The amount moves from available to blocked at once; the payout then goes PENDING → PROCESSING → COMPLETED (or REJECTED), notified to WITHDRAWAL webhooks.',
        headers: IdempotencyHeaders,
        body: CashoutBody,
        bodyExamples: cashoutExamples,
        response: responses({ 201: Cashout }, [
          ...SELLER_ERRORS,
          ...BODY_ERRORS,
          ['VALIDATION_ERROR', 'a field breaks its rule (unknown fields are ignored); `details` names each one'],
          'INVALID_PIX_KEY',
          'API_WITHDRAWAL_DISABLED_GLOBALLY',
          'TRANSFER_NOT_ALLOWED',
          'MINIMUM_VALUE',
          'MAXIMUM_VALUE',
          'INSUFFICIENT_BALANCE',
          ...IDEMPOTENCY_ERRORS,
        ]),
      },
      // requestCashout checks CashoutBody inside the idempotent request, in CONTRACT §8's order
      // (the body, then the key, then the seller), so that a 400 is stored and replayed like a 422.
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const answer = await requestCashout(ctx, {
        sellerId: request.sellerId,
        body: request.body,
        idempotencyKey: typeof key === 'string' ? key : undefined,
        channel: 'API',
        now: ctx.clock.now(),
      });
      return sendAnswer(reply, answer);
    },
  );

  app.get(
    '/api/public/cashout/:id',
    {
      schema: {
        ...common,
        operationId: 'getCashout',
        summary: 'Read one cashout',
        params: PathId,
        response: responses({ 200: CashoutRead }, [...SELLER_ERRORS, ...owned('cashout')]),
      },
    },
    async (request) => {
      const row = await findCashout(ctx.db, parsePathId(request.params.id));
      if (!row) throw new ApiError('NOT_FOUND', 'Cashout not found');
      if (row.seller_id !== request.sellerId) throw new ApiError('FORBIDDEN', 'This cashout belongs to another account');
      return cashoutReadView(row);
    },
  );
}

export async function cashoutAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/admin/cashouts/:id/events',
    {
      schema: {
        tags: ['operator'],
        security: operatorSecurity,
        operationId: 'applyCashoutEvent',
        summary: 'Apply a payout provider/operator event to a cashout',
        description:
          'PENDING → PROCESSING; PROCESSING → COMPLETED or REJECTED; PENDING → CANCELLED. The event last applied again answers 200 and changes nothing.',
        params: PathId,
        body: Fields({ event: StringEnum(CASHOUT_EVENTS) }, { title: 'CashoutEvent' }),
        bodyExamples: {
          processing: { summary: 'The provider took it: PENDING → PROCESSING', value: { event: 'PROCESSING' } },
          completed: { summary: 'Paid: PROCESSING → COMPLETED', value: { event: 'COMPLETED' } },
          rejected: {
            summary: 'Refused by the receiving bank: PROCESSING → REJECTED (the amount returns to available)',
            value: { event: 'REJECTED' },
          },
          cancelled: { summary: 'Cancelled before the provider had it: PENDING → CANCELLED', value: { event: 'CANCELLED' } },
        },
        response: responses({ 200: Cashout }, [
          ...OPERATOR_ERRORS,
          ...BODY_ERRORS,
          'VALIDATION_ERROR',
          ...existing('cashout'),
          ['INVALID_TRANSITION', "the cashout's status does not allow this event"],
        ]),
      },
    },
    async (request) => {
      const id = parsePathId(request.params.id);
      const result = await ctx.db.tx((q) => moveCashout(q, id, request.body.event, ctx.clock.now()));
      if (result.kind === 'not_found') throw new ApiError('NOT_FOUND', 'Cashout not found');
      if (result.kind === 'refused')
        throw new ApiError('INVALID_TRANSITION', `Cannot apply ${request.body.event} to a ${result.row.status} cashout: ${result.reason}`);
      return cashoutView(result.row);
    },
  );
}
