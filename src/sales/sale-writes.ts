/**
 * Sales are written in groups (db/group-write.ts): the sales that reach the database while it is
 * busy go together in one statement, each with its items and, when keyed, its Idempotency-Key's
 * answer (CONTRACT §3). Each sale of the group stands alone: a key another request answered or
 * holds (a live claim) writes neither that sale nor its answer, and tells only that sale so.
 */
import type { Db } from '../db/db.ts';
import { groupWriterPer, waitingAsForAConnection } from '../db/group-write.ts';
import { run, sql } from '../db/sql.ts';
import { DEFAULT_FEE_SCHEDULE } from '../domain/fees.ts';
import { replacingExpired } from '../http/idempotency.ts';
import type { KeyedAnswer } from '../http/idempotent-write.ts';

/** One sale's row as written (status PENDENTE), its items in order. */
export interface SaleRow {
  /** Drawn before the write when the provider's reference carries it (boleto); null: the next id. */
  given_id: number | null;
  seller_id: number;
  payment_method: string;
  amount: number;
  customer_name: string;
  customer_email: string;
  customer_document: string | null;
  customer_phone: string | null;
  shipping: object | null;
  postback_url: string | null;
  installments: number | null;
  card_brand: string | null;
  card_last_four: string | null;
  card_bin: string | null;
  card_fingerprint: string | null;
  pix_code: string | null;
  pix_txid: string | null;
  pix_expires_at: Date | null;
  pix_charge: string | null;
  boleto_code: string | null;
  boleto_barcode: string | null;
  boleto_due_date: string | null;
  boleto_pdf_url: string | null;
  boleto_pix_code: string | null;
  boleto_charge: string | null;
  next_check_at: Date | null;
  /** null: the sale's own id. */
  external_id: string | null;
  provider_data: object | null;
  provider: string;
  /** The provider account the sale is made with (CONTRACT §11). */
  account: string;
  at: Date;
  items: { title: string; unit_price: number; quantity: number; tangible: boolean }[];
  /** 3-D Secure (a card sale sent with `authentication`): the shopper's token, its return and its expiry; null otherwise. */
  auth_token: string | null;
  auth_return_url: string | null;
  auth_expires_at: Date | null;
}

export type SaleWrite = SaleRow & { answer: KeyedAnswer | null };

// One statement out at a time; what arrives meanwhile waits and goes together (db/group-write.ts says why one).
const statements_in_flight = 1;
const sales_per_statement = 32;
const default_fee_schedule = JSON.stringify(DEFAULT_FEE_SCHEDULE);

/** Writes the sale (and its key's answer): its id, or null when the key was answered or claimed by another request. */
export const writeSale = groupWriterPer((db: Db) => ({
  flush: (sales: SaleWrite[]) => writeSales(db, sales),
  // One statement may not store two answers under one key.
  slot: (s: SaleWrite) => (s.answer ? `${s.seller_id}\n${s.answer.endpoint}\n${s.answer.key}` : null),
  inFlight: statements_in_flight,
  maxItems: sales_per_statement,
  ...waitingAsForAConnection('sales'),
}));

/**
 * One statement for all `sales`. Their ids are drawn first, so that each answer can carry its
 * sale's; answers are stored in key order, so two statements never wait on each other's keys in a
 * circle. A sale is written only when its answer was (or it has no key).
 */
export async function writeSales(db: Db, sales: SaleWrite[]): Promise<(number | null)[]> {
  // Object.assign, not a rest pattern and spreads: those copied a sale's 40 fields by V8's slow path,
  // about 35 µs a keyed sale in a micro-benchmark against 1.4. `answer: undefined` leaves it out of the JSON.
  const input = JSON.stringify(sales.map((s, n) => Object.assign({}, s, s.answer, { answer: undefined, keyed: s.answer !== null, n })));
  const r = await run<{ n: number; id: number; written: boolean }>(
    db,
    sql`WITH input AS (
      SELECT i.*, coalesce(i.given_id, nextval('transactions_id_seq')) AS id
      FROM jsonb_to_recordset(${input}::jsonb) AS i (n int, given_id bigint, seller_id bigint, payment_method text, amount bigint,
        customer_name text, customer_email text, customer_document text, customer_phone text, shipping jsonb, postback_url text,
        installments int, card_brand text, card_last_four text, card_bin text, card_fingerprint text,
        pix_code text, pix_txid text, pix_expires_at timestamptz, pix_charge text,
        boleto_code text, boleto_barcode text, boleto_due_date date, boleto_pdf_url text, boleto_pix_code text, boleto_charge text,
        next_check_at timestamptz, external_id text, provider_data jsonb, provider text, account text, at timestamptz, items jsonb,
        keyed boolean, endpoint text, key text, request_hash text, status int, head text, tail text, expires_at timestamptz, claim_token text,
        auth_token text, auth_return_url text, auth_expires_at timestamptz)
    ), ended AS (
      DELETE FROM idempotency_claims c USING input i
      WHERE i.claim_token IS NOT NULL AND c.seller_id = i.seller_id AND c.endpoint = i.endpoint AND c.key = i.key AND c.claimed_by = i.claim_token
      RETURNING i.n
    ), kept AS (
      INSERT INTO idempotency_keys AS k (seller_id, endpoint, key, request_hash, response_status, response_body, expires_at, created_at)
      SELECT i.seller_id, i.endpoint, i.key, i.request_hash, i.status, i.head || i.id::text || i.tail, i.expires_at, i.at
      FROM input i
      WHERE i.keyed AND CASE WHEN i.claim_token IS NULL
        THEN NOT EXISTS (SELECT 1 FROM idempotency_claims c
          WHERE c.seller_id = i.seller_id AND c.endpoint = i.endpoint AND c.key = i.key AND c.claimed_until > clock_timestamp())
        ELSE EXISTS (SELECT 1 FROM ended WHERE ended.n = i.n) END
      ORDER BY i.seller_id, i.endpoint, i.key
      ${replacingExpired}
      RETURNING k.seller_id, k.endpoint, k.key
    ), written AS (
      INSERT INTO transactions (id, seller_id, status, payment_method, amount, fee_schedule,
        customer_name, customer_email, customer_document, customer_phone, shipping, postback_url, installments,
        card_brand, card_last_four, card_bin, card_fingerprint, pix_code, pix_txid, pix_expires_at,
        boleto_code, boleto_barcode, boleto_due_date, boleto_pdf_url, boleto_pix_code, boleto_charge, next_check_at,
        external_transaction_id, provider_data, created_at, updated_at, pix_charge, provider, account)
      SELECT i.id, i.seller_id, 'PENDENTE', i.payment_method, i.amount,
        coalesce(s.fee_schedule, (SELECT fee_schedule FROM platform_settings), ${default_fee_schedule}::jsonb),
        i.customer_name, i.customer_email, i.customer_document, i.customer_phone, i.shipping, i.postback_url, i.installments,
        i.card_brand, i.card_last_four, i.card_bin, i.card_fingerprint, i.pix_code, i.pix_txid, i.pix_expires_at,
        i.boleto_code, i.boleto_barcode, i.boleto_due_date, i.boleto_pdf_url, i.boleto_pix_code, i.boleto_charge, i.next_check_at,
        coalesce(i.external_id, i.id::text), i.provider_data, i.at, i.at, i.pix_charge, i.provider, i.account
      FROM input i LEFT JOIN sellers s ON s.id = i.seller_id
      WHERE NOT i.keyed OR EXISTS (SELECT 1 FROM kept k WHERE k.seller_id = i.seller_id AND k.endpoint = i.endpoint AND k.key = i.key)
      ORDER BY i.n
      RETURNING id
    ), items AS (
      INSERT INTO sale_items (transaction_id, title, unit_price, quantity, tangible)
      SELECT i.id, x.title, x.unit_price, x.quantity, x.tangible
      FROM input i JOIN written w ON w.id = i.id,
        ROWS FROM (jsonb_to_recordset(i.items) AS (title text, unit_price bigint, quantity int, tangible boolean)) WITH ORDINALITY AS x (title, unit_price, quantity, tangible, o)
      ORDER BY i.n, x.o
    ), authentications AS (
      INSERT INTO card_authentications (transaction_id, token, return_url, expires_at, created_at)
      SELECT i.id, i.auth_token, i.auth_return_url, i.auth_expires_at, i.at
      FROM input i JOIN written w ON w.id = i.id WHERE i.auth_token IS NOT NULL
    )
    SELECT i.n, i.id, EXISTS (SELECT 1 FROM written w WHERE w.id = i.id) AS written FROM input i ORDER BY i.n`,
  );
  if (r.rows.length !== sales.length) throw new Error(`a group of ${sales.length} sales answered ${r.rows.length} rows`);
  return r.rows.map((row) => {
    if (row.written) return Number(row.id);
    if (sales[row.n]!.answer === null) throw new Error('a sale without a key is always written');
    return null;
  });
}
