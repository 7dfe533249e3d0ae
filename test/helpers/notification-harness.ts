// The notification suites' test bench: a gateway on an injectable clock, a real receiver, delivery
// jobs run by hand and closed at the end, and the requests a suite makes most.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { createDeliveryJob, type DeliveryOptions } from '../../src/notifications/delivery.ts';
import { adminHeaders, type Gateway, type SellerKeys, startGateway } from './gateway.ts';
import { type ReceivedRequest, type Receiver, startReceiver } from './receiver.ts';

type Json = Record<string, unknown>;
export type DeliveryJob = ReturnType<typeof createDeliveryJob>;

export const bodyOf = (r: ReceivedRequest) => JSON.parse(r.body.toString('utf8')) as Json;
export const header = (r: ReceivedRequest, name: string) => {
  const v = r.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(',') : v;
};

/** Shared by the notification suites: one gateway on an injectable clock, one receiver, jobs closed at the end. */
export function notificationHarness(env?: Record<string, string>) {
  const h = {
    gw: undefined as unknown as Gateway,
    rx: undefined as unknown as Receiver,
    current: new Date('2026-11-21T12:00:00.000Z'),
    jobs: [] as DeliveryJob[],
    tick(ms: number) {
      h.current = new Date(h.current.getTime() + ms);
    },
    job(options: DeliveryOptions = {}) {
      const j = createDeliveryJob({ retryDelaysMs: [60_000], random: () => 0.5, ...options });
      h.jobs.push(j);
      return j;
    },
    /** One run, and every attempt it started recorded; how many it claimed. */
    async runOnce(job: DeliveryJob): Promise<number> {
      const claimed = await job.run(h.gw.ctx);
      await job.settled();
      return claimed;
    },
    /** Runs the job until a run claims nothing (bounded). */
    async drain(job: DeliveryJob) {
      for (let i = 0; i < 50; i++) if ((await h.runOnce(job)) === 0) return;
      throw new Error('delivery job never ran dry');
    },
    async sale(seller: SellerKeys, body: Json) {
      const res = await h.gw.app.inject({ method: 'POST', url: '/api/sales', headers: seller.headers, payload: body });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { sale: { id: number } }).sale.id;
    },
    async event(id: number, event: string) {
      return h.gw.app.inject({ method: 'POST', url: `/admin/transactions/${id}/events`, headers: adminHeaders, payload: { event } });
    },
    async move(id: number, ...events: string[]) {
      for (const e of events) {
        const res = await h.event(id, e);
        assert.equal(res.statusCode, 200, `${e}: ${res.body}`);
      }
    },
    async cashoutEvent(id: number, event: string) {
      const res = await h.gw.app.inject({ method: 'POST', url: `/admin/cashouts/${id}/events`, headers: adminHeaders, payload: { event } });
      assert.equal(res.statusCode, 200, `${event}: ${res.body}`);
    },
    async webhook(seller: SellerKeys, path: string, types: string[] = ['TRANSACTION']) {
      const res = await h.gw.app.inject({ method: 'POST', url: '/api/webhooks', headers: seller.headers, payload: { url: h.rx.url(path), types } });
      assert.equal(res.statusCode, 201, res.body);
      return (res.json() as { id: number }).id;
    },
    /** Every notification of the seller, newest first, through the API. */
    async notifications(seller: SellerKeys) {
      const res = await h.gw.app.inject({ method: 'GET', url: '/api/notifications?limit=100', headers: seller.headers });
      assert.equal(res.statusCode, 200, res.body);
      return (res.json() as { data: Json[] }).data;
    },
    async countRows(where: string, params: unknown[]) {
      return (await h.gw.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM notifications WHERE ${where}`, params)).rows[0]!.n;
    },
  };
  before(async () => {
    h.gw = await startGateway({ clock: { now: () => h.current }, ...(env ? { env } : {}) });
    h.rx = await startReceiver();
  });
  after(async () => {
    for (const j of h.jobs) await j.close();
    await h.rx?.close();
    await h.gw?.close();
  });
  return h;
}
