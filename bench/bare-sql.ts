// The bare SQL the benchmark compares the gateway with: the same writes as each use case,
// written straight, parameters precomputed. Deliberately not shared with src/: it is the yardstick.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../src/db/db.ts';
import { DEFAULT_FEE_SCHEDULE } from '../src/domain/fees.ts';
import { buildBrCode } from '../src/domain/pix-brcode.ts';

export type BareName = 'salePix' | 'saleCard' | 'paySale' | 'cashout';

// What the gateway writes for the benchmark's sales, precomputed: the platform fee schedule, a real
// BR Code and card fields of the same sizes; per row only the unique values are drawn.
export const fee_schedule = JSON.stringify(DEFAULT_FEE_SCHEDULE);
export const br_code = buildBrCode({
  key: '123e4567-e12b-12d1-a456-426655440000',
  amountCents: 15000,
  merchantName: 'GATEWAY SANDBOX',
  merchantCity: 'SAO PAULO',
  txid: 'A'.repeat(25),
});
const card_provider_data = JSON.stringify({ sandboxOutcome: 'APPROVED' });

async function insertSale(db: Db, sellerId: number, method: string): Promise<number> {
  const pix = method === 'PIX';
  return db.tx(async (q) => {
    const t = await q.query<{ id: number }>(
      `
      INSERT INTO transactions (seller_id, status, payment_method, amount, fee_schedule, customer_name, customer_email,
        pix_code, pix_txid, pix_expires_at, installments, card_brand, card_last_four, card_bin, card_fingerprint,
        external_transaction_id, provider_data, provider, created_at, updated_at)
      VALUES ($1, 'PENDENTE', $2, 15000, $3::jsonb, 'Maria Silva', 'maria@example.com', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::jsonb,
        CASE WHEN $2 = 'PIX' THEN 'api-pix' ELSE 'sandbox' END, now(), now())
      RETURNING id`,
      [
        sellerId,
        method,
        fee_schedule,
        pix ? br_code : null,
        pix ? randomBytes(19).toString('base64url').slice(0, 25) : null,
        pix ? new Date(Date.now() + 3_600_000) : null,
        pix ? null : 1,
        pix ? null : 'VISA',
        pix ? null : '1111',
        pix ? null : '411111',
        pix ? null : randomBytes(32).toString('hex'),
        `sbx_${pix ? 'pix' : 'card'}_${randomBytes(12).toString('hex')}`,
        pix ? null : card_provider_data,
      ],
    );
    await q.query("INSERT INTO sale_items (transaction_id, title, unit_price, quantity, tangible) VALUES ($1, 'Curso', 15000, 1, false)", [
      t.rows[0]!.id,
    ]);
    return t.rows[0]!.id;
  });
}

async function paySale(db: Db, sellerId: number, id: number): Promise<void> {
  await db.tx(async (q) => {
    await q.query(
      "UPDATE transactions SET status = 'PAGO', system_fee = 298, reserve_amount = 0, net_amount = 14702, completed_at = now(), updated_at = now() WHERE id = $1",
      [id],
    );
    const p = await q.query<{ id: number }>("INSERT INTO postings (kind, seller_id, transaction_id) VALUES ('FIRST_PAYMENT', $1, $2) RETURNING id", [
      sellerId,
      id,
    ]);
    await q.query(
      `INSERT INTO journal_lines (posting_id, account, seller_id, amount) VALUES
      ($1, 'customer_funds', NULL, -15000), ($1, 'available', $2, 14702), ($1, 'fee_revenue', NULL, 298)`,
      [p.rows[0]!.id, sellerId],
    );
    await q.query('UPDATE balances SET available = available + 14702 WHERE seller_id = $1', [sellerId]);
    await q.query(
      `INSERT INTO notifications (seller_id, kind, event_id, url, transaction_id, event_status, previous_status, status_changed_at, payload, order_key, next_attempt_at, created_at)
      VALUES ($1, 'TRANSACTION_POSTBACK', $2, 'http://127.0.0.1:9/', $3, 'PAGO', 'PENDENTE', now(), '{}', 'k', now() + interval '1 year', now())`,
      [sellerId, randomUUID(), id],
    );
  });
}

async function cashout(db: Db, sellerId: number): Promise<void> {
  await db.tx(async (q) => {
    const c = await q.query<{ id: number }>(
      `INSERT INTO cashouts (seller_id, status, amount, fee_fixed, fee_variable, fee_total, net_amount, pix_key, pix_key_type, provider, created_at, updated_at)
      VALUES ($1, 'PENDING', 10000, 200, 0, 200, 9800, '52998224725', 'CPF', 'sandbox', now(), now()) RETURNING id`,
      [sellerId],
    );
    const b = await q.query(
      'UPDATE balances SET available = available - 10000, blocked = blocked + 10000 WHERE seller_id = $1 AND available >= 10000 RETURNING 1',
      [sellerId],
    );
    if (b.rowCount === 0) throw new Error('bare cashout: balance exhausted; fund the bench sellers more');
    const p = await q.query<{ id: number }>("INSERT INTO postings (kind, seller_id, cashout_id) VALUES ('CASHOUT_CREATED', $1, $2) RETURNING id", [
      sellerId,
      c.rows[0]!.id,
    ]);
    await q.query(
      "INSERT INTO journal_lines (posting_id, account, seller_id, amount) VALUES ($1, 'available', $2, -10000), ($1, 'blocked', $2, 10000)",
      [p.rows[0]!.id, sellerId],
    );
  });
}

export const bareScenarios = {
  /** Set-up only (not timed): n pending PIX sales in one statement, with the gateway's fee schedule. */
  async insertPendingSales(db: Db, sellerId: number, n: number): Promise<number[]> {
    const r = await db.query<{ id: number }>(
      `
      WITH t AS (
        INSERT INTO transactions (seller_id, status, payment_method, amount, fee_schedule, customer_name, customer_email,
          pix_code, pix_txid, external_transaction_id, provider, created_at, updated_at)
        SELECT $1, 'PENDENTE', 'PIX', 15000, coalesce((SELECT fee_schedule FROM platform_settings), $3::jsonb), 'Maria Silva', 'maria@example.com',
          'brcode', md5(random()::text || g), 'ext', 'api-pix', now(), now()
        FROM generate_series(1, $2) AS g RETURNING id
      ), i AS (
        INSERT INTO sale_items (transaction_id, title, unit_price, quantity, tangible) SELECT id, 'Curso', 15000, 1, false FROM t
      )
      SELECT id FROM t ORDER BY id`,
      [sellerId, n, JSON.stringify(DEFAULT_FEE_SCHEDULE)],
    );
    return r.rows.map((x) => x.id);
  },

  /** Runs `concurrency` loops for `seconds`; answers operations per second. */
  async run(db: Db, name: BareName, sellerIds: number[], concurrency: number, seconds: number): Promise<number> {
    // Enough pending sales that the loop never runs dry within the timed window.
    const pending = name === 'paySale' ? await bareScenarios.insertPendingSales(db, sellerIds[0]!, 60_000) : [];
    const deadline = Date.now() + seconds * 1000;
    let done = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, w) => {
        for (let i = 0; Date.now() < deadline; i++) {
          const sellerId = sellerIds[(w + i * concurrency) % sellerIds.length]!;
          if (name === 'salePix') await insertSale(db, sellerId, 'PIX');
          else if (name === 'saleCard') await insertSale(db, sellerId, 'CREDIT_CARD');
          else if (name === 'cashout') await cashout(db, sellerId);
          else {
            const id = pending.pop();
            if (id === undefined) break;
            await paySale(db, sellerId, id);
          }
          done++;
        }
      }),
    );
    return done / seconds;
  },
};
