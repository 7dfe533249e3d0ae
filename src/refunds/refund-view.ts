import { Type } from 'typebox';
import { iso, Nullable, StringEnum } from '../http/router.ts';
import type { RefundRow } from '../transactions/refunds-repo.ts';

/** CONTRACT §5a. */
export const Refund = Type.Object(
  {
    id: Type.Integer(),
    transactionId: Type.Integer(),
    amount: Type.Integer({ description: 'cents' }),
    status: StringEnum(['PENDING', 'SUCCEEDED', 'FAILED'] as const, {
      description:
        'PENDING while its cents wait in blocked (a PIX devolução until the PSP reports it); SUCCEEDED: the payer has them; FAILED: back in available',
    }),
    failureReason: Nullable(Type.String({ description: "the provider's reason, when FAILED" })),
    createdAt: Type.String({ format: 'date-time' }),
    completedAt: Nullable(Type.String({ format: 'date-time', description: 'null until SUCCEEDED or FAILED' })),
  },
  { title: 'Refund' },
);

export function refundView(row: RefundRow) {
  return {
    id: Number(row.id),
    transactionId: Number(row.transaction_id),
    amount: Number(row.amount),
    status: row.status,
    failureReason: row.failure_reason,
    createdAt: row.created_at.toISOString(),
    completedAt: iso(row.completed_at),
  };
}
