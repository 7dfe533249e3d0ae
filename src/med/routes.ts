import type { AppContext } from '../context.ts';
import { sendAnswer } from '../http/idempotency.ts';
import { parsePathId } from '../http/ids.ts';
import { BODY_ERRORS, IDEMPOTENCY_ERRORS, owned, responses, SELLER_ERRORS } from '../http/openapi.ts';
import { IdempotencyHeaders, PathId, type Router, sellerSecurity } from '../http/router.ts';
import { Transaction } from '../transactions/transaction-view.ts';
import { defendMed, MedDefenseBody } from './defend.ts';

/** `POST /api/transactions/{id}/med-defense` (CONTRACT §11.5): the seller contests a MED at the PSP. */
export async function medRoutes(app: Router, ctx: AppContext): Promise<void> {
  app.post(
    '/api/transactions/:id/med-defense',
    {
      schema: {
        tags: ['transactions'],
        security: sellerSecurity,
        operationId: 'defendMed',
        summary: "Contest a PIX dispute (MED): the seller's defence, sent to the PSP",
        description:
          'While the sale is in MED and its infraction is open (ABERTA) at the PSP, the justification is sent to the PSP (analysis: rejected). ' +
          'Answers 202 with the transaction: `med.defense.status` is SENT, SENDING while the PSP could not be reached (sent again by the gateway), ' +
          'or REFUSED with the reason the PSP gave. The outcome (MED won or lost) comes later, by the usual notifications.',
        params: PathId,
        headers: IdempotencyHeaders,
        body: MedDefenseBody,
        bodyExamples: {
          delivered: {
            summary: 'The goods were delivered',
            value: {
              justification:
                'Produto entregue em 12/11/2026 no endereço do comprador; comprovante de entrega com assinatura e rastreio AB123456789BR.',
            },
          },
        },
        response: responses({ 202: Transaction }, [
          ...SELLER_ERRORS,
          ...BODY_ERRORS,
          ['VALIDATION_ERROR', '`justification` is missing, not a string, or not 10 to 2,000 characters'],
          ...owned('transaction'),
          [
            'INVALID_TRANSITION',
            'the sale is not in MED, no infraction of it is known from the PSP, the infraction is no longer open, or a defence was sent already',
          ],
          ...IDEMPOTENCY_ERRORS,
        ]),
      },
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      const answer = await defendMed(
        ctx,
        {
          sellerId: request.sellerId,
          transactionId: parsePathId(request.params.id),
          body: request.body,
          idempotencyKey: typeof key === 'string' ? key : undefined,
          channel: 'API',
        },
        request.log,
      );
      return sendAnswer(reply, answer);
    },
  );
}
