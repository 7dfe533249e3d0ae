/**
 * A seller's defence of a MED (CONTRACT §11.5), for the API and the panel alike: while the sale is in
 * MED and its infraction open, the justification is recorded (SENDING) under the request's key, then
 * sent to the PSP outside the transaction; the answer is the transaction read, its `med.defense`
 * saying SENT, or REFUSED with the PSP's reason. A replayed answer sends nothing.
 */
import type { FastifyBaseLogger } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import type { Queryable } from '../db/db.ts';
import { maybeOne, run, sql } from '../db/sql.ts';
import { objectChecker } from '../domain/body-schema.ts';
import { invalid, ok, type Result, refuse } from '../domain/result.ts';
import { answerOf, finalAnswer, idempotent, type StoredResponse } from '../http/idempotency.ts';
import { Fields } from '../http/router.ts';
import { sendDefense } from '../providers/med/defense-send.ts';
import { transactionView } from '../transactions/transaction-view.ts';
import { findTransaction, itemsOf } from '../transactions/transactions-repo.ts';

export const JUSTIFICATION_MIN = 10;
export const JUSTIFICATION_MAX = 2000;

export const MedDefenseBody = Fields(
  {
    justification: Type.String({
      minLength: JUSTIFICATION_MIN,
      maxLength: JUSTIFICATION_MAX,
      description:
        "a text of 10 to 2,000 characters: the seller's account of the sale (what was sold, how it was delivered), sent to the PSP as written",
    }),
  },
  { title: 'MedDefenseRequest' },
);

const checkBody = objectChecker(MedDefenseBody, { depth: 1, maxItems: 0 });

function parseBody(body: unknown): Result<string> {
  const checked = checkBody(body);
  if (!checked.ok) return checked;
  const justification = checked.value.justification.trim();
  if (justification.length < JUSTIFICATION_MIN)
    return invalid([{ field: 'justification', message: `must have at least ${JUSTIFICATION_MIN} characters besides spaces` }]);
  return ok(justification);
}

export interface DefenseAsk {
  sellerId: number;
  transactionId: number;
  body: unknown;
  idempotencyKey: string | undefined;
  channel: 'API' | 'PANEL';
}

const endpoints = { API: 'POST /api/transactions/{id}/med-defense', PANEL: 'POST /painel/vendas/{id}/med' } as const;

export async function defendMed(ctx: AppContext, ask: DefenseAsk, log: FastifyBaseLogger): Promise<StoredResponse> {
  const made: { infraction?: string } = {};
  const justification = parseBody(ask.body);
  const request = {
    db: ctx.db,
    fingerprintKey: ctx.requestFingerprintKey,
    sellerId: ask.sellerId,
    endpoint: endpoints[ask.channel],
    key: ask.idempotencyKey,
    body: { transactionId: ask.transactionId, body: ask.body },
    now: ctx.clock.now(),
  };
  const answer = await idempotent(request, async (q) => {
    if (!justification.ok) return justification;
    const recorded = await recordDefense(q, ask, justification.value, ctx.clock.now());
    if (!recorded.ok) return recorded;
    made.infraction = recorded.value;
    return { accepted: await readView(q, ask.transactionId) };
  });
  if (answer.replayed || made.infraction === undefined) return answer;
  const outcome = await sendDefense(ctx, made.infraction);
  if (outcome === 'unreachable') log.warn({ infraction: made.infraction }, 'MED defence not sent to the PSP; will retry');
  const body = await readView(ctx.db, ask.transactionId);
  await finalAnswer(request, body).catch((error: unknown) => log.warn({ err: error }, 'stored answer not updated'));
  return { ...answerOf({ accepted: body }), replayed: false };
}

/** The defence recorded on the sale's open infraction; the infraction's id, or why it cannot be defended. */
async function recordDefense(q: Queryable, ask: DefenseAsk, justification: string, at: Date): Promise<Result<string>> {
  const sale = maybeOne(
    await run<{ seller_id: number; status: string }>(q, sql`SELECT seller_id, status FROM transactions WHERE id = ${ask.transactionId} FOR UPDATE`),
  );
  if (!sale) return refuse('NOT_FOUND', 'Transaction not found');
  if (Number(sale.seller_id) !== ask.sellerId) return refuse('FORBIDDEN', 'This transaction belongs to another account');
  const infraction = maybeOne(
    await run<{ id_infracao: string; status: string; defense_state: string | null }>(
      q,
      sql`SELECT id_infracao, status, defense_state FROM med_infractions WHERE transaction_id = ${ask.transactionId}
          ORDER BY created_at DESC, id_infracao DESC LIMIT 1 FOR UPDATE`,
    ),
  );
  if (sale.status !== 'MED') return refuse('INVALID_TRANSITION', `A defence is sent only while the sale is in MED; it is ${sale.status}`);
  if (!infraction) return refuse('INVALID_TRANSITION', 'No infraction of this sale is known from the PSP: there is nothing to defend there');
  if (infraction.status !== 'ABERTA')
    return refuse('INVALID_TRANSITION', `The infraction is ${infraction.status}: only an open one (ABERTA) can be defended`);
  if (infraction.defense_state === 'SENDING' || infraction.defense_state === 'SENT')
    return refuse('INVALID_TRANSITION', 'A defence of this infraction was already sent');
  await run(
    q,
    sql`UPDATE med_infractions SET defense = ${justification}, defense_state = 'SENDING', defense_refusal = NULL, defense_at = ${at}, updated_at = ${at}
        WHERE id_infracao = ${infraction.id_infracao}`,
  );
  return ok(infraction.id_infracao);
}

async function readView(q: Queryable, id: number) {
  const row = (await findTransaction(q, id))!;
  return transactionView(row, (await itemsOf(q, [id])).get(id) ?? []);
}
