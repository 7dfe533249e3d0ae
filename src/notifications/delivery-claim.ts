/**
 * The delivery claim: which due notifications this worker attempts now. Fair per seller, then per
 * target (URL) within the seller, and never past an endpoint's open circuit (delivery-record.ts opens
 * and closes them). One statement; what it reads is bounded by the sellers that have notifications
 * waiting and a window of each one's oldest due rows, never by the size of anyone's backlog.
 */
import { raw, type Sql, sql } from '../db/sql.ts';
import { liveSecretsSql } from './signing-secrets.ts';

export interface Claimed {
  id: number;
  seller_id: number;
  kind: string;
  url: string;
  event_id: string;
  payload: string;
  attempts: number;
  previous_status: string;
  status_changed_at: Date;
  event_status: string;
  resend_prior_status: string | null;
  test: boolean;
  /** The seller's signing secrets live at the claim (two during a rotation's overlap). */
  secrets: string[];
}

export interface ClaimLimits {
  /** Attempts this claim may start (the worker's free slots, at most a batch). */
  room: number;
  /** Attempts in flight to one URL, in every worker. */
  perTargetMax: number;
  /** Attempts in flight for one seller, in every worker. */
  perSellerMax: number;
  /** Due rows read per seller: its oldest, in the order they fell due. */
  window: number;
}

export interface ClaimTimes {
  now: Date;
  /** The lease of what is claimed. */
  lease: Date;
  /**
   * How long past its circuit's time a notification an open circuit holds waits: it goes before then
   * if a probe succeeds (the release), so this only bounds how often a held backlog is looked at again.
   */
  holdMs: number;
  /** Notifications held by an open circuit that were created before this have outlived the retry schedule. */
  expiredBefore: Date;
}

const expired_error = 'not delivered within the retry schedule: the endpoint kept failing (circuit open)';

// Due, and held by no worker.
const dueSql = (t: ClaimTimes): Sql =>
  sql`n.status = 'PENDING' AND n.next_attempt_at <= ${t.now} AND (n.locked_until IS NULL OR n.locked_until <= ${t.now})`;

// First in line for its resource and target (a manual resend skips the line).
const inLineSql = raw(`(n.resend_prior_status IS NOT NULL OR NOT EXISTS (
  SELECT 1 FROM notifications p
  WHERE p.order_key = n.order_key AND p.status = 'PENDING' AND p.id < n.id
    AND (p.resend_prior_status IS NULL OR p.resend_prior_status = 'PENDING')))`);

const rowSql = sql`n.id, n.seller_id, n.url, n.next_attempt_at, n.created_at,
  n.test OR n.resend_prior_status IS NOT NULL AS bypass, ${inLineSql} AS in_line`;

// The sellers with notifications pending (a skip scan: one index probe per seller), each with its
// room under its share of attempts in flight, and a window of its oldest due notifications that no
// worker holds. A seller at its share is not read further. Attempts in flight are counted through
// the leases' indexes only (a lease is only ever on a PENDING row): a status test here would let the
// planner walk every pending row of a seller or a URL instead.
const windowsSql = (t: ClaimTimes, l: ClaimLimits): Sql => sql`
  pending_sellers AS (
    SELECT min(seller_id) AS seller_id FROM notifications WHERE status = 'PENDING'
    UNION ALL
    SELECT (SELECT min(n.seller_id) FROM notifications n WHERE n.status = 'PENDING' AND n.seller_id > p.seller_id)
    FROM pending_sellers p WHERE p.seller_id IS NOT NULL
  ), sellers AS (
    SELECT p.seller_id, ${l.perSellerMax}::int - (SELECT count(*)::int FROM notifications b
      WHERE b.seller_id = p.seller_id AND b.locked_until > ${t.now}) AS free
    FROM pending_sellers p WHERE p.seller_id IS NOT NULL
  ), seen AS (
    SELECT w.* FROM sellers s CROSS JOIN LATERAL (
      SELECT ${rowSql} FROM notifications n
      WHERE n.seller_id = s.seller_id AND ${dueSql(t)}
      ORDER BY n.next_attempt_at, n.id LIMIT ${l.window}
    ) w WHERE s.free > 0
    UNION
    -- the first notification in line of each half-open endpoint with nothing in flight: its probe,
    -- wherever it is (held or not)
    SELECT w.* FROM sellers s JOIN notification_circuits c ON c.seller_id = s.seller_id AND c.open_until <= ${t.now}
      AND NOT EXISTS (SELECT 1 FROM notifications b WHERE b.url = c.url AND b.locked_until > ${t.now})
    CROSS JOIN LATERAL (
      SELECT ${rowSql} FROM notifications n
      WHERE n.url = c.url AND n.seller_id = c.seller_id AND n.status = 'PENDING'
        AND (n.locked_until IS NULL OR n.locked_until <= ${t.now}) AND ${inLineSql}
      ORDER BY n.next_attempt_at, n.id LIMIT 1
    ) w WHERE s.free > 0
  )`;

// Each seen row with its URL's attempts in flight and its endpoint's circuit: closed (also for a
// resend or a test, which the circuit never holds), open, or half-open (open past its time). A
// half-open endpoint with nothing in flight sends its first notification in line as the probe.
const gatesSql = (t: ClaimTimes): Sql => sql`
  targets AS (
    SELECT u.url, (SELECT count(*)::int FROM notifications b WHERE b.url = u.url AND b.locked_until > ${t.now}) AS busy
    FROM (SELECT DISTINCT url FROM seen) u
  ), gated AS (
    SELECT s.*, t.busy, c.open_until,
      CASE WHEN s.bypass OR c.open_until IS NULL THEN 'closed' WHEN c.open_until > ${t.now} THEN 'open' ELSE 'half' END AS circuit
    FROM seen s JOIN targets t ON t.url = s.url
    LEFT JOIN notification_circuits c ON c.seller_id = s.seller_id AND c.url = s.url
  ), probes AS (
    SELECT DISTINCT ON (seller_id, url) id FROM gated WHERE circuit = 'half' AND busy = 0 AND in_line
    ORDER BY seller_id, url, next_attempt_at, id
  )`;

// Round-robin: each target's rows in line are ranked (within its room under the per-target limit),
// each seller's by that rank (one per target before a second to any; probes first), and the claim
// takes every seller's first before anyone's second, up to the room. Rows an open or half-open
// circuit holds move out of the window, written once, until a probe succeeds (the release brings them
// back) or for `holdMs` past the circuit's time; held past the schedule's end, they fail.
const picksSql = (t: ClaimTimes, l: ClaimLimits): Sql => sql`
  candidates AS (
    SELECT g.*, row_number() OVER (PARTITION BY g.url ORDER BY g.next_attempt_at, g.id) AS target_rank
    FROM gated g WHERE g.in_line AND (g.circuit = 'closed' OR g.id IN (SELECT id FROM probes))
  ), ranked AS (
    SELECT c.*, row_number() OVER (PARTITION BY c.seller_id ORDER BY c.target_rank, c.id IN (SELECT id FROM probes) DESC, c.next_attempt_at, c.id) AS seller_rank
    FROM candidates c WHERE c.target_rank <= ${l.perTargetMax} - c.busy
  ), picked AS (
    SELECT r.id FROM ranked r JOIN sellers s ON s.seller_id = r.seller_id WHERE r.seller_rank <= s.free
    ORDER BY r.seller_rank, r.next_attempt_at, r.id LIMIT ${l.room}
  ), held AS (
    SELECT g.id, greatest(g.open_until, ${t.now}) + ${t.holdMs}::float8 * interval '1 millisecond' AS until,
      g.circuit = 'open' AND g.created_at < ${t.expiredBefore} AS expired
    FROM gated g WHERE g.circuit = 'open' OR (g.circuit = 'half' AND g.id NOT IN (SELECT id FROM probes))
  ), holdable AS (
    SELECT n.id FROM notifications n
    WHERE n.id IN (SELECT id FROM held) AND n.status = 'PENDING' AND (n.locked_until IS NULL OR n.locked_until <= ${t.now})
    FOR UPDATE SKIP LOCKED
  ), holding AS (
    UPDATE notifications n SET next_attempt_at = greatest(n.next_attempt_at, h.until),
      status = CASE WHEN h.expired THEN 'FAILED' ELSE n.status END,
      last_error = CASE WHEN h.expired THEN ${expired_error} ELSE n.last_error END
    FROM held h WHERE n.id = h.id AND n.id IN (SELECT id FROM holdable)
    RETURNING 1
  )`;

// Both writes lock with SKIP LOCKED: two workers never wait for each other's rows.
export const claimSql = (t: ClaimTimes, l: ClaimLimits): Sql => sql`
  WITH RECURSIVE ${windowsSql(t, l)}, ${gatesSql(t)}, ${picksSql(t, l)}, claimable AS (
    SELECT n.id FROM notifications n
    WHERE n.id IN (SELECT id FROM picked) AND n.status = 'PENDING' AND (n.locked_until IS NULL OR n.locked_until <= ${t.now})
    FOR UPDATE SKIP LOCKED
  )
  UPDATE notifications n SET locked_until = ${t.lease}, attempts = n.attempts + 1 FROM claimable WHERE n.id = claimable.id
  RETURNING n.id, n.seller_id, n.kind, n.url, n.event_id, n.payload, n.attempts, n.previous_status, n.status_changed_at, n.event_status,
    n.resend_prior_status, n.test, ${liveSecretsSql('n.seller_id', t.now)} AS secrets`;
