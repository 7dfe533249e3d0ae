/**
 * The gateway's record of each MED 2.0 infraction (CONTRACT §11.5), kept by the one apply step in the
 * transaction that moves the sale: the infraction's latest status, its reason and deadline, and the
 * seller's defence. The plan is made against the status recorded before the fact.
 */
import type { Queryable } from '../../db/db.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import type { FactPlan, SaleSnapshot } from '../../domain/fact-plans.ts';
import { latestStatus, planInfraction } from '../../domain/med-plans.ts';
import type { Fact, InfractionStatus } from '../../domain/provider-facts.ts';

type Infraction = Extract<Fact, { kind: 'INFRACTION' }>;

/** Plans the fact against the infraction as recorded (locked), and records what it says. */
export async function planRecordedInfraction(q: Queryable, fact: Infraction, sale: SaleSnapshot, at: Date): Promise<FactPlan> {
  const known = maybeOne(
    await run<{ status: InfractionStatus }>(q, sql`SELECT status FROM med_infractions WHERE id_infracao = ${fact.infractionId} FOR UPDATE`),
  );
  // A sale can be contested again once an earlier infraction was decided: its block stays while any is undecided or accepted.
  const others = await run(
    q,
    sql`SELECT 1 FROM med_infractions WHERE transaction_id = ${sale.id} AND id_infracao <> ${fact.infractionId}
          AND status IN ('ABERTA', 'EM_DEFESA', 'ACEITA') LIMIT 1`,
  );
  const plan = planInfraction(fact, sale, known?.status ?? null, others.rows.length > 0);
  if (!fact.overdue) await recordInfraction(q, fact, sale.id, latestStatus(known?.status ?? null, fact.status), at);
  return plan;
}

async function recordInfraction(q: Queryable, fact: Infraction, saleId: number, status: InfractionStatus, at: Date): Promise<void> {
  const opened = fact.openedAt === null ? null : new Date(fact.openedAt);
  const deadline = fact.deadline === null ? null : new Date(fact.deadline);
  // A defence the PSP records is sent, whoever sent it (the seller here, or through the PSP's own channels).
  await run(
    q,
    sql`INSERT INTO med_infractions (id_infracao, transaction_id, account, end_to_end_id, amount, status, reason, opened_at, deadline, accepted_at,
          defense, defense_state, defense_at, created_at, updated_at)
        VALUES (${fact.infractionId}, ${saleId}, ${fact.account}, ${fact.endToEndId}, ${fact.amount}, ${status}, ${fact.reason}, ${opened}, ${deadline},
          CASE WHEN ${status}::text = 'ACEITA' THEN ${at}::timestamptz END,
          ${fact.defense}, CASE WHEN ${fact.defense}::text IS NOT NULL THEN 'SENT' END, CASE WHEN ${fact.defense}::text IS NOT NULL THEN ${at}::timestamptz END,
          ${at}, ${at})
        ON CONFLICT (id_infracao) DO UPDATE SET
          status = EXCLUDED.status,
          reason = coalesce(EXCLUDED.reason, med_infractions.reason),
          opened_at = coalesce(EXCLUDED.opened_at, med_infractions.opened_at),
          deadline = coalesce(EXCLUDED.deadline, med_infractions.deadline),
          accepted_at = CASE WHEN EXCLUDED.status = 'ACEITA' THEN coalesce(med_infractions.accepted_at, ${at}::timestamptz) ELSE med_infractions.accepted_at END,
          defense = coalesce(med_infractions.defense, EXCLUDED.defense),
          defense_state = CASE WHEN EXCLUDED.defense IS NOT NULL OR (med_infractions.defense_state = 'SENDING' AND EXCLUDED.status = 'EM_DEFESA') THEN 'SENT'
            WHEN med_infractions.defense_state = 'SENDING' AND EXCLUDED.status NOT IN ('ABERTA', 'EM_DEFESA') THEN 'REFUSED'
            ELSE med_infractions.defense_state END,
          defense_refusal = CASE WHEN EXCLUDED.defense IS NOT NULL THEN NULL
            WHEN med_infractions.defense_state = 'SENDING' AND EXCLUDED.status NOT IN ('ABERTA', 'EM_DEFESA') THEN 'the infraction was decided before the PSP received the defence'
            ELSE med_infractions.defense_refusal END,
          defense_at = coalesce(med_infractions.defense_at, EXCLUDED.defense_at),
          updated_at = ${at}`,
  );
}
