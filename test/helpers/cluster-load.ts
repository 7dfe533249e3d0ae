// A steady load of keyed writes, sent as our SDK sends them: every POST with an Idempotency-Key, and a
// 503, a 409 (the key still in use), a 429 or a cut connection retried with the same key until an
// answer comes (bounded). What the gateway acknowledged (2xx) is kept, to be looked for afterwards.
import { randomUUID } from 'node:crypto';
import { cardExample, pixExample } from './fixtures.ts';

export type Op = 'pix_sale' | 'card_sale' | 'pay' | 'refund' | 'cashout';

export interface Ack {
  op: Op;
  key: string;
  /** The sale, refund or cashout the answer named. */
  id: number;
  /** The sale a pay or a refund was for. */
  saleId?: number;
  at: number;
}

export interface LoadOptions {
  base: string;
  sellerHeaders: Record<string, string>;
  adminToken: string;
  postbackUrl: string;
  loops: number;
}

const retry_bound_ms = 90_000;
const request_timeout_ms = 30_000; // as the SDK waits
const retried_statuses = new Set([409, 429, 500, 502, 503]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Load {
  readonly acks: Ack[] = [];
  /** Answers that were not 2xx after their retries (a refused cashout, a pay of a sale paid meanwhile). */
  readonly refusals: { op: Op; status: number; body: string }[] = [];
  /** Requests that got a 503 or a cut connection at least once before their answer. */
  unsure = 0;
  private stopping = false;
  private loops: Promise<void>[] = [];

  constructor(private readonly o: LoadOptions) {}

  start(): void {
    this.stopping = false;
    for (let i = 0; i < this.o.loops; i++) this.loops.push(this.loop(i));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops.splice(0));
  }

  /** The longest time between two acknowledged writes from `from` to `to` (from counts as one): a fault's outage. */
  longestGap(from: number, to: number): number {
    const times = [from, ...this.acks.map((a) => a.at).filter((x) => x > from && x <= to)].sort((x, y) => x - y);
    let longest = 0;
    for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i]! - times[i - 1]!);
    return times.length === 1 ? to - from : longest;
  }

  /** Writes acknowledged after `t`. */
  acksAfter(t: number): number {
    return this.acks.filter((a) => a.at > t).length;
  }

  private async loop(n: number): Promise<void> {
    for (let i = 0; !this.stopping; i++) {
      const sale = await this.send('pix_sale', '/api/sales', this.o.sellerHeaders, pixExample({ postbackUrl: this.o.postbackUrl }));
      if (sale !== undefined) {
        const paid = await this.send('pay', `/sandbox/sales/${sale}/pay`, { authorization: `Bearer ${this.o.adminToken}` }, {}, sale);
        if (paid !== undefined && i % 2 === 0) {
          await this.send('refund', `/api/transactions/${sale}/refund`, this.o.sellerHeaders, { amount: 1000 }, sale);
        }
      }
      await this.send('card_sale', '/api/sales', this.o.sellerHeaders, cardExample('4111111111111111', '123', { postbackUrl: this.o.postbackUrl }));
      if ((i + n) % 3 === 0) {
        await this.send('cashout', '/api/public/cashout', this.o.sellerHeaders, { amount: 1.0, pixKey: '52998224725', pixKeyType: 'CPF' });
      }
    }
  }

  /** One keyed request, retried with its key until answered; the id it acknowledged, if any. */
  private async send(op: Op, path: string, headers: Record<string, string>, body: unknown, saleId?: number): Promise<number | undefined> {
    const key = randomUUID();
    const started = Date.now();
    let unsure = false;
    for (;;) {
      let status = 0;
      let text = '';
      try {
        const res = await fetch(`${this.o.base}${path}`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(request_timeout_ms),
        });
        status = res.status;
        text = await res.text();
      } catch {
        status = 0; // cut, or no answer in time
      }
      if (status >= 200 && status < 300) {
        if (unsure) this.unsure++;
        const json = JSON.parse(text) as { id?: number; sale?: { id: number }; refund?: { id: number }; withdrawal?: { id: number } };
        const id = json.sale?.id ?? json.refund?.id ?? json.withdrawal?.id ?? json.id ?? saleId!;
        this.acks.push({ op, key, id, ...(saleId !== undefined ? { saleId } : {}), at: Date.now() });
        return id;
      }
      if (status !== 0 && !retried_statuses.has(status)) {
        this.refusals.push({ op, status, body: text.slice(0, 300) });
        return undefined;
      }
      unsure ||= status === 503 || status === 0;
      if (Date.now() - started > retry_bound_ms)
        throw new Error(`${op} ${key}: no answer within ${retry_bound_ms} ms (last ${status} ${text.slice(0, 200)})`);
      await sleep(status === 409 ? 500 : 250);
    }
  }
}
