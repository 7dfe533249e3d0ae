/**
 * The infractions poller (CONTRACT §11.5): every MED_POLL_SECONDS it lists the PSP's infractions over
 * a window that overlaps the last one and reaches back to the oldest infraction still undecided here,
 * every page, and applies each through the one apply step (a status already told is skipped by one
 * read per page). Then it sends again the defences whose answer was lost, and shows the operator the
 * accepted infractions whose devolução never came.
 */
import type { AppContext } from '../../context.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import type { InfractionStatus, ProviderFact } from '../../domain/provider-facts.ts';
import type { Job, JobLog } from '../../workers/job.ts';
import { applyProviderFact } from '../events/apply-fact.ts';
import type { InfractionSource, PixPsp } from '../ports.ts';
import { sendDefense } from './defense-send.ts';

const day_ms = 24 * 3600_000;
// With no window behind it yet, the poller looks back as far as a MED may be opened after its Pix.
const first_window_ms = 90 * day_ms;
// An undecided infraction is listed again from a little before it opened, wherever the PSP dates it.
const open_margin_ms = 3600_000;
// An undecided infraction keeps the window open this long at most; past it, it is the operator's (stale).
const open_reach_ms = 180 * day_ms;
// However short the interval, a late listing or a skewed clock is covered.
const min_overlap_ms = 10 * 60_000;
const accepted_wait_ms = 11 * day_ms;
const stale_after_deadline_ms = 30 * day_ms;
const resend_after_ms = 2 * 60_000;
const batch = 100;

export type PollingPort = PixPsp & { infractions: InfractionSource };

export interface PollRound {
  listed: number;
  applied: number;
  needsOperator: number;
  resent: number;
  overdue: number;
}

export function createInfractionPollJob(port: PollingPort, pollSeconds: number): Job {
  const intervalMs = pollSeconds * 1000;
  let failedAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'med-infractions',
    idle_interval_ms: intervalMs,
    async run(ctx, _wake, log, stopping) {
      // After a failed round the runner calls again within a second: the PSP is asked again only an interval later.
      if (Date.now() - failedAt < intervalMs) return 0;
      try {
        await pollInfractions(ctx, port, { overlapMs: intervalMs, log, stopping });
      } catch (error) {
        failedAt = Date.now();
        throw new Error(`MED infractions, retried in ${pollSeconds} s: ${error instanceof Error ? error.message : String(error)}`);
      }
      return 0;
    },
  };
}

interface PollOptions {
  overlapMs: number;
  log?: JobLog;
  stopping?: AbortSignal;
}

/** One round for one PIX account. */
export async function pollInfractions(ctx: AppContext, port: PollingPort, o: PollOptions): Promise<PollRound> {
  const round: PollRound = { listed: 0, applied: 0, needsOperator: 0, resent: 0, overdue: 0 };
  const account = port.account.id;
  const fim = ctx.clock.now();
  const inicio = await windowStart(ctx, account, fim, o.overlapMs);
  for await (const page of port.infractions.pages({ inicio, fim })) {
    round.listed += page.length;
    for (const fact of await untold(ctx, page)) {
      // Cut short, the window is not recorded as polled: the next round lists it again (each fact applies once).
      o.stopping?.throwIfAborted();
      await apply(ctx, fact, round, o.log);
    }
  }
  await run(
    ctx.db,
    sql`INSERT INTO med_poll_state (account, polled_until) VALUES (${account}, ${fim})
        ON CONFLICT (account) DO UPDATE SET polled_until = greatest(med_poll_state.polled_until, EXCLUDED.polled_until)`,
  );
  round.resent = await resendLost(ctx, account, o.stopping);
  round.overdue = await showOverdue(ctx, account, round, o.log);
  return round;
}

/** From the last window's end less the overlap, or from before the oldest infraction still undecided, whichever is earlier. */
async function windowStart(ctx: AppContext, account: string, fim: Date, overlapMs: number): Promise<Date> {
  const row = maybeOne(
    await run<{ polled_until: Date | null; oldest: Date | null }>(
      ctx.db,
      sql`SELECT (SELECT polled_until FROM med_poll_state WHERE account = ${account}) AS polled_until,
            (SELECT min(opened_at) FROM med_infractions WHERE account = ${account} AND status IN ('ABERTA', 'EM_DEFESA')) AS oldest`,
    ),
  );
  const last = row?.polled_until ? new Date(row.polled_until).getTime() - Math.max(overlapMs, min_overlap_ms) : fim.getTime() - first_window_ms;
  const oldest = row?.oldest ? new Date(row.oldest).getTime() - open_margin_ms : Number.POSITIVE_INFINITY;
  return new Date(Math.max(fim.getTime() - open_reach_ms, Math.min(last, oldest)));
}

/** The facts of a page the store has not got yet: a page already told costs one read. */
async function untold(ctx: AppContext, page: ProviderFact[]): Promise<ProviderFact[]> {
  if (page.length === 0) return [];
  const r = await run<{ identity: string }>(
    ctx.db,
    sql`SELECT identity FROM provider_events WHERE provider = 'api-pix' AND identity = ANY(${page.map((f) => f.identity)}::text[])`,
  );
  const told = new Set(r.rows.map((x) => x.identity));
  return page.filter((f) => !told.has(f.identity));
}

async function apply(ctx: AppContext, fact: ProviderFact, round: PollRound, log?: JobLog): Promise<void> {
  const applied = await applyProviderFact(ctx, fact);
  if (applied.state === 'repeat') return;
  round.applied++;
  if (applied.state === 'needs_operator') {
    round.needsOperator++;
    log?.error({ identity: fact.identity, reason: applied.reason }, 'provider event needs the operator');
  }
}

/**
 * Defences whose answer never came (the PSP unreachable): sent again while the infraction is still
 * open. Each is claimed first (its time moved on), so two rounds at once never send one twice.
 */
async function resendLost(ctx: AppContext, account: string, stopping?: AbortSignal): Promise<number> {
  const now = ctx.clock.now();
  const r = await run<{ id_infracao: string }>(
    ctx.db,
    sql`UPDATE med_infractions SET defense_at = ${now}
        WHERE id_infracao IN (
          SELECT id_infracao FROM med_infractions
          WHERE account = ${account} AND defense_state = 'SENDING' AND status = 'ABERTA' AND defense_at < ${new Date(now.getTime() - resend_after_ms)}
          ORDER BY defense_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
        AND defense_at < ${new Date(now.getTime() - resend_after_ms)}
        RETURNING id_infracao`,
  );
  let sent = 0;
  for (const { id_infracao } of r.rows) {
    stopping?.throwIfAborted();
    if ((await sendDefense(ctx, id_infracao)) !== 'unreachable') sent++;
  }
  return sent;
}

/**
 * Infractions that wait too long while the money stays blocked at the PSP: accepted with no devolução
 * in 11 days, or undecided 30 days past their deadline. Each is shown to the operator once.
 */
async function showOverdue(ctx: AppContext, account: string, round: PollRound, log?: JobLog): Promise<number> {
  const now = ctx.clock.now().getTime();
  const r = await run<{ id_infracao: string; end_to_end_id: string; amount: number; reason: string | null; status: InfractionStatus; why: string }>(
    ctx.db,
    sql`SELECT i.id_infracao, i.end_to_end_id, i.amount, i.reason, i.status, w.why FROM med_infractions i JOIN transactions t ON t.id = i.transaction_id
        CROSS JOIN LATERAL (SELECT CASE WHEN i.status = 'ACEITA' THEN 'overdue' ELSE 'stale' END AS why) w
        WHERE i.account = ${account} AND t.status = 'MED'
          AND ((i.status = 'ACEITA' AND i.accepted_at < ${new Date(now - accepted_wait_ms)})
            OR (i.status IN ('ABERTA', 'EM_DEFESA') AND i.deadline < ${new Date(now - stale_after_deadline_ms)}))
          AND NOT EXISTS (SELECT 1 FROM provider_events e WHERE e.provider = 'api-pix' AND e.identity = 'infracao/' || i.id_infracao || ':' || w.why)
        ORDER BY i.id_infracao LIMIT ${batch}`,
  );
  for (const i of r.rows) {
    await apply(
      ctx,
      {
        provider: 'api-pix',
        identity: `infracao/${i.id_infracao}:${i.why}`,
        externalReference: i.id_infracao,
        fact: {
          kind: 'INFRACTION',
          sale: { ids: [i.end_to_end_id], saleId: null, referenceSuffices: false },
          infractionId: i.id_infracao,
          endToEndId: i.end_to_end_id,
          account,
          status: i.status,
          amount: Number(i.amount),
          reason: i.reason,
          openedAt: null,
          deadline: null,
          defense: null,
          overdue: true,
        },
      },
      round,
      log,
    );
  }
  return r.rows.length;
}
