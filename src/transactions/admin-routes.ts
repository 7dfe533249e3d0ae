import type { AppContext } from '../context.ts';
import { refusalError } from '../domain/result.ts';
import { TRANSACTION_EVENTS } from '../domain/transaction-states.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, existing, OPERATOR_ERRORS, responses } from '../http/openapi.ts';
import { Fields, operatorSecurity, PathId, type Router, StringEnum } from '../http/router.ts';
import { applyEvent } from './apply-event.ts';
import { Transaction } from './transaction-view.ts';

export async function transactionAdminRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/admin/transactions/:id/events',
    {
      schema: {
        tags: ['operator'],
        security: operatorSecurity,
        operationId: 'applyTransactionEvent',
        summary: 'Apply a processor/operator event to a transaction',
        description:
          "What a provider would report, applied along the spec's state table with its postings and notifications: PAYMENT_CONFIRMED (PENDENTE → PAGO), " +
          'SENT_TO_PROCESSOR, APPROVED, DECLINED, PROCESSING_ERROR, RETRY_PROCESSED, CANCELLED, EXPIRED, REFUNDED (a refund of all that is left), ' +
          'CHARGEBACK_OPENED / _REVERTED / _CONFIRMED (cards), MED_OPENED / MED_WON / MED_LOST (PIX). The event last applied again answers 200 and changes nothing.',
        params: PathId,
        body: Fields({ event: StringEnum(TRANSACTION_EVENTS) }, { title: 'TransactionEvent' }),
        bodyExamples: {
          paymentConfirmed: { summary: 'A PIX or boleto payment arrived: PENDENTE → PAGO', value: { event: 'PAYMENT_CONFIRMED' } },
          sentToProcessor: { summary: 'A card sale went to the processor: PENDENTE → EM_PROCESSAMENTO', value: { event: 'SENT_TO_PROCESSOR' } },
          medOpened: { summary: 'A PIX dispute (MED) opened: PAGO → MED, the net blocked', value: { event: 'MED_OPENED' } },
          chargebackOpened: { summary: 'A card dispute opened: PAGO → CHARGEBACK, the fine charged', value: { event: 'CHARGEBACK_OPENED' } },
        },
        response: responses({ 200: Transaction }, [
          ...OPERATOR_ERRORS,
          ...BODY_ERRORS,
          'VALIDATION_ERROR',
          ...existing('transaction'),
          ['INVALID_TRANSITION', "the transaction's status or method does not allow this event, or a refund of it is PENDING"],
        ]),
      },
    },
    async (request) => {
      const moved = await applyEvent(ctx, parsePathId(request.params.id), request.body.event);
      if (!moved.ok) throw refusalError(moved.refusal);
      return moved.value;
    },
  );
}
