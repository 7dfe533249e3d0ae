/**
 * Sends a seller's recorded defence to the PSP of the account that reported the infraction, outside
 * any transaction, and records the answer: SENT, or REFUSED with the PSP's reason. A PSP that cannot
 * be reached leaves it SENDING: the poller sends it again while the infraction is still open.
 */
import type { AppContext } from '../../context.ts';
import { maybeOne, run, sql } from '../../db/sql.ts';
import { AccountNotConfigured } from '../ports.ts';

export type DefenseOutcome = 'SENT' | 'REFUSED' | 'unreachable';

export async function sendDefense(ctx: AppContext, infractionId: string): Promise<DefenseOutcome> {
  const row = maybeOne(
    await run<{ account: string; defense: string }>(
      ctx.db,
      sql`SELECT account, defense FROM med_infractions WHERE id_infracao = ${infractionId} AND defense_state = 'SENDING'`,
    ),
  );
  if (!row) return 'SENT';
  let answer: { ok: true } | { ok: false; reason: string };
  try {
    const source = ctx.providers.port('PIX', row.account).infractions;
    answer = source
      ? await source.defend(infractionId, row.defense)
      : { ok: false, reason: `account ${row.account} does not report infractions here` };
  } catch (error) {
    if (error instanceof AccountNotConfigured) answer = { ok: false, reason: `account ${row.account} not configured` };
    else return 'unreachable';
  }
  const at = ctx.clock.now();
  if (answer.ok) {
    await run(
      ctx.db,
      sql`UPDATE med_infractions SET defense_state = 'SENT', status = CASE WHEN status = 'ABERTA' THEN 'EM_DEFESA' ELSE status END, updated_at = ${at}
          WHERE id_infracao = ${infractionId} AND defense_state = 'SENDING'`,
    );
    return 'SENT';
  }
  await run(
    ctx.db,
    sql`UPDATE med_infractions SET defense_state = 'REFUSED', defense_refusal = ${answer.reason}, updated_at = ${at}
        WHERE id_infracao = ${infractionId} AND defense_state = 'SENDING'`,
  );
  return 'REFUSED';
}
