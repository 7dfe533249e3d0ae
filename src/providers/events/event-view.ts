import { Type } from 'typebox';
import { PROVIDER_NAMES } from '../../domain/provider-facts.ts';
import { iso, Nullable, StringEnum } from '../../http/router.ts';
import type { StoredEvent } from './store.ts';

export const FACT_STATES = ['applied', 'held', 'needs_operator'] as const;

/** CONTRACT §14: one fact a provider told the gateway, and what became of it. */
export const ProviderEvent = Type.Object(
  {
    id: Type.Integer(),
    provider: StringEnum(PROVIDER_NAMES),
    kind: Type.String({
      description: 'what the provider said: AUTHORISATION, CAPTURE, CANCELLATION, REFUND, CHARGEBACK, MED, PIX_RECEIVED, PIX_RETURN, NOTICE',
    }),
    state: StringEnum(FACT_STATES, {
      description:
        'applied: it moved the state machine (or repeated what was applied); held: it waits for its sale to move; needs_operator: it never can',
    }),
    reason: Nullable(Type.String({ description: 'why it is held or needs the operator; null when applied' })),
    transactionId: Nullable(Type.Integer()),
    refundId: Nullable(Type.Integer()),
    cashoutId: Nullable(Type.Integer()),
    amount: Nullable(Type.Integer({ description: 'cents' })),
    externalReference: Type.String({ description: "the provider's id: pspReference, endToEndId, idEnvio, charge id" }),
    followup: Nullable(
      Type.Object(
        {
          call: StringEnum(['CAPTURE', 'RETURN'] as const, { description: 'CAPTURE: the payment is captured; RETURN: its money is sent back whole' }),
          status: StringEnum(['TO_SEND', 'SENT', 'DONE', 'REFUSED'] as const),
          detail: Nullable(Type.String({ description: "the provider's words, when it gave some" })),
        },
        { title: 'ProviderFollowup', description: 'a call the gateway owes the provider because of this fact' },
      ),
    ),
    receivedAt: Type.String({ format: 'date-time' }),
    appliedAt: Nullable(Type.String({ format: 'date-time' })),
    resolvedAt: Nullable(Type.String({ format: 'date-time' })),
    note: Nullable(Type.String({ description: "the operator's note when resolved" })),
  },
  { title: 'ProviderEvent' },
);

export function providerEventView(e: StoredEvent) {
  const id = (x: number | null) => (x === null ? null : Number(x));
  return {
    id: Number(e.id),
    provider: e.provider,
    kind: e.kind,
    state: e.state,
    reason: e.state === 'applied' ? null : e.reason,
    transactionId: id(e.transaction_id),
    refundId: id(e.refund_id),
    cashoutId: id(e.cashout_id),
    amount: id(e.amount),
    externalReference: e.external_reference,
    followup: e.followup && e.followup_status ? { call: e.followup, status: e.followup_status, detail: e.followup_detail } : null,
    receivedAt: e.received_at.toISOString(),
    appliedAt: iso(e.applied_at),
    resolvedAt: iso(e.resolved_at),
    note: e.note,
  };
}
