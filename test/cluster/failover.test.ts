// The gateway on the three-node cluster of `npm run cluster`, an API process and a worker process,
// under a steady load of keyed PIX and card sales, sandbox payments, refunds and cashouts, through the
// loss of a machine (CONTRACT §16): (a) kill -9 of the primary's PostgreSQL and Patroni, (b) the next
// primary frozen (SIGSTOP) for longer than its leader lease, then thawed, (c) a planned switchover.
// After each: every write answered 2xx is on the new primary, the ledger verifies, no key made two
// provider calls, every notification was delivered, writes were answered again within 30 s, and the
// old primary is a standby again. A failing run prints `patronictl list` and the gateway's last lines.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { after, before, describe, type TestContext, test } from 'node:test';
import pg from 'pg';
import { parseDatabaseUrl } from '../../src/db/hosts.ts';
import { type AdyenDouble, startAdyenDouble } from '../helpers/adyen-double.ts';
import { Cluster, type ClusterNode, cluster_skip, type Member } from '../helpers/cluster.ts';
import { type Ack, Load } from '../helpers/cluster-load.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const port_base = 25432;
const admin_token = 'cluster-test-admin-token-0123456789abcdef';
const postback_secret = 'cluster-test-postback-secret-0123456789ab';
const writes_back_bound_ms = 30_000;
const lease_s = 25; // longer than the leader's 10 s lock: a stalled VM
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let stopping = false;

interface Proc {
  child: ChildProcess;
  lines: string[];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function launch(role: string, env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', role], {
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (d: Buffer) => {
    lines.push(...d.toString().split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 300));
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  child.once('exit', (code, signal) => {
    if (!stopping) console.error(`the ${role} process exited (${code ?? signal}); its last lines:\n${lines.slice(-30).join('\n')}`);
  });
  return { child, lines };
}

async function until(what: string, boundMs: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > boundMs) throw new Error(`${what}: not within ${boundMs} ms`);
    await sleep(250);
  }
}

describe('the gateway through the loss of a database machine (a three-node cluster)', { skip: cluster_skip, timeout: 1_500_000 }, () => {
  const dir = mkdtempSync('/var/tmp/gw-cluster-test-');
  chmodSync(dir, 0o755); // the nodes run as postgres
  const cluster = new Cluster(dir, port_base);
  let databaseUrl: string;
  let adyen: AdyenDouble;
  let rx: Receiver;
  let api: Proc;
  let worker: Proc;
  let base: string;
  let load: Load;

  before(async () => {
    databaseUrl = await cluster.start();
    adyen = await startAdyenDouble();
    rx = await startReceiver();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: databaseUrl,
      ADMIN_TOKEN: admin_token,
      POSTBACK_SECRET: postback_secret,
      PORT: String(port),
      HOST: '127.0.0.1',
      CARD_PROVIDER: 'adyen',
      ADYEN_CHECKOUT_URL: adyen.url,
      ADYEN_API_KEY: adyen.apiKey,
      ADYEN_MERCHANT_ACCOUNT: adyen.merchantAccount,
      ADYEN_HMAC_KEY: adyen.hmacKeyHex,
      ADYEN_NOTIFICATION_USERNAME: adyen.username,
      ADYEN_NOTIFICATION_PASSWORD: adyen.password,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      SANDBOX_AUTOPILOT: 'true',
      RATE_LIMIT_PER_SECOND: '100000',
      LOG_LEVEL: 'info',
    };
    api = launch('api', env);
    await until('the API process to answer /health', 120_000, async () => {
      try {
        return (await fetch(`${base}/health`, { signal: AbortSignal.timeout(1_000) })).status === 200;
      } catch {
        return false;
      }
    });
    worker = launch('worker', { ...env, PORT: String(await freePort()) });
    const seller = await (
      await fetch(`${base}/admin/sellers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Loja Cluster', email: 'cluster@example.com' }),
      })
    ).json();
    const sellerHeaders = { 'x-api-public-key': seller.publicKey, 'x-api-private-key': seller.privateKey };
    const hook = await fetch(`${base}/api/webhooks`, {
      method: 'POST',
      headers: { ...sellerHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ url: rx.url('/hooks'), types: ['TRANSACTION', 'WITHDRAWAL'] }),
    });
    assert.equal(hook.status, 201, await hook.text());
    load = new Load({ base, sellerHeaders, adminToken: admin_token, postbackUrl: rx.url('/postback'), loops: 4 });
  });

  after(async () => {
    stopping = true;
    await load?.stop().catch(() => {});
    for (const p of [api, worker]) {
      try {
        if (p?.child.pid) process.kill(-p.child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await cluster.command(['stop']).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    await rx?.close();
    await adyen?.close();
  });

  /** A database client on the current leader (the checks' own view, not the gateway's). */
  async function onLeader<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const leader = await cluster.leader();
    assert.ok(leader, 'a leader');
    const c = new pg.Client({ ...parseDatabaseUrl(databaseUrl).config, host: '127.0.0.1', port: leader.pgPort });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  }

  const ids = (acks: Ack[], ...ops: Ack['op'][]) => acks.filter((a) => ops.includes(a.op)).map((a) => a.id);

  /** Every acknowledged write is on the leader: the figure printed, every miss named. */
  async function found(acks: Ack[]): Promise<number> {
    return onLeader(async (c) => {
      const count = async (table: string, list: number[]) =>
        list.length === 0 ? 0 : Number((await c.query(`SELECT count(*) AS n FROM ${table} WHERE id = ANY($1::bigint[])`, [list])).rows[0].n);
      const sales = ids(acks, 'pix_sale', 'card_sale');
      const paid = acks.filter((a) => a.op === 'pay').map((a) => a.saleId!);
      const keys = acks.filter((a) => a.op !== 'pay').map((a) => a.key);
      const stillPending = paid.length
        ? Number((await c.query(`SELECT count(*) AS n FROM transactions WHERE id = ANY($1::bigint[]) AND status = 'PENDENTE'`, [paid])).rows[0].n)
        : 0;
      const keyed = Number((await c.query(`SELECT count(DISTINCT key) AS n FROM idempotency_keys WHERE key = ANY($1::text[])`, [keys])).rows[0].n);
      const result = {
        sales: [await count('transactions', sales), sales.length],
        refunds: [await count('refunds', ids(acks, 'refund')), ids(acks, 'refund').length],
        cashouts: [await count('cashouts', ids(acks, 'cashout')), ids(acks, 'cashout').length],
        payments: [paid.length - stillPending, paid.length],
      };
      for (const [what, [have, want]] of Object.entries(result))
        assert.equal(have, want, `${what}: ${have} of ${want} acknowledged found on the new primary`);
      assert.equal(keyed, keys.length, `${keyed} of ${keys.length} acknowledged Idempotency-Keys answer on the new primary`);
      return Object.values(result).reduce((n, [have]) => n + have!, 0);
    });
  }

  /** Calls Adyen received for one key more than once (the same Idempotency-Key, or the same reference). */
  function duplicateProviderCalls(): number {
    const payments = adyen.requests.filter((r) => r.method === 'POST' && r.path === '/payments');
    const byKey = new Map<string, number>();
    const byReference = new Map<string, number>();
    for (const r of payments) {
      const key = r.headers['idempotency-key'] ?? '';
      byKey.set(key, (byKey.get(key) ?? 0) + 1);
      const reference = (r.body as { reference?: string }).reference ?? '';
      byReference.set(reference, (byReference.get(reference) ?? 0) + 1);
    }
    const extra = (m: Map<string, number>) => [...m.values()].reduce((n, v) => n + v - 1, 0);
    return Math.max(extra(byKey), extra(byReference));
  }

  async function everyNotificationDelivered(): Promise<number> {
    await until('every notification delivered', 180_000, () =>
      onLeader(async (c) => Number((await c.query(`SELECT count(*) AS n FROM notifications WHERE status <> 'DELIVERED'`)).rows[0].n) === 0),
    );
    return onLeader(async (c) => {
      const events = (await c.query<{ event_id: string }>(`SELECT event_id FROM notifications`)).rows.map((r) => r.event_id);
      const heard = new Set(rx.requests.map((r) => r.headers['x-event-id']));
      const missing = events.filter((e) => !heard.has(e));
      assert.deepEqual(missing.slice(0, 5), [], `${missing.length} notifications marked delivered that the receiver never heard`);
      return events.length;
    });
  }

  async function ledgerVerifies(): Promise<void> {
    const res = await until('the ledger verification to answer', 30_000, async () => {
      try {
        return (
          await fetch(`${base}/admin/ledger/verify`, { headers: { authorization: `Bearer ${admin_token}` }, signal: AbortSignal.timeout(60_000) })
        ).ok;
      } catch {
        return false;
      }
    });
    const verify = await (await fetch(`${base}/admin/ledger/verify`, { headers: { authorization: `Bearer ${admin_token}` } })).json();
    assert.equal(verify.ok, true, `ledger: ${JSON.stringify(verify).slice(0, 500)} (${res} ms)`);
  }

  /** Three members, one leader, the others streaming from it: `node` among them, a standby. */
  const rejoined = (node: ClusterNode) => (members: Member[]) =>
    members.length === 3 &&
    members.filter((m) => m.role === 'leader' && m.state === 'running').length === 1 &&
    members.filter((m) => m.role !== 'leader' && (m.state === 'streaming' || m.state === 'running')).length === 2 &&
    members.some((m) => m.name === node.name && m.role !== 'leader');

  /**
   * Runs the load, inflicts the fault at t, waits for writes and for `node` to be a standby again, stops
   * the load, and checks everything; prints the figures, or on failure Patroni's table and the logs.
   */
  async function survive(t: TestContext, name: string, inflict: () => Promise<ClusterNode>): Promise<void> {
    try {
      for (const p of [api, worker]) assert.equal(p.child.exitCode ?? p.child.signalCode, null, 'the API and worker processes run');
      const before = load.acks.length;
      load.start();
      await until('the load to be acknowledged', 60_000, () => load.acks.length > before + 20);
      const at = Date.now();
      const node = await inflict();
      await until('writes answered again', 120_000, () => load.acksAfter(Date.now() - 1_000) > 0 && load.acksAfter(at) > 0);
      await cluster.waitFor(`${node.name} to rejoin as a standby`, 180_000, rejoined(node));
      await sleep(3_000);
      await load.stop();
      const gapMs = load.longestGap(at, Date.now());
      const acks = load.acks.length;
      const foundCount = await found(load.acks);
      await ledgerVerifies();
      const duplicates = duplicateProviderCalls();
      const notified = await everyNotificationDelivered();
      const figure = `${name}: ${acks - before} writes acknowledged (${acks} so far, ${foundCount} of them found on the new primary), ${(gapMs / 1000).toFixed(1)} s without writes, ${load.unsure} answered after a 503 or a cut, ${duplicates} duplicate provider calls, ${notified} notifications delivered`;
      t.diagnostic(`figure: ${figure}`);
      assert.ok(gapMs <= writes_back_bound_ms, `writes answered again ${gapMs} ms after the last one before the fault`);
      assert.equal(duplicates, 0, 'a key made two provider calls');
    } catch (error) {
      console.error(`--- patronictl list ---\n${cluster.list()}`);
      console.error(`--- API process, last lines ---\n${api.lines.slice(-40).join('\n')}`);
      console.error(`--- worker process, last lines ---\n${worker.lines.slice(-40).join('\n')}`);
      throw error;
    }
  }

  test('(a) kill -9 of the primary machine: PostgreSQL and Patroni; `npm run cluster -- start` brings the node back', async (t) => {
    await survive(t, 'kill -9', async () => {
      const leader = (await cluster.leader())!;
      cluster.signal(cluster.processes(leader), 'SIGKILL');
      await cluster.waitFor('a new leader', 60_000, (m) => m.some((x) => x.role === 'leader' && x.state === 'running' && x.name !== leader.name));
      await cluster.start();
      return leader;
    });
  });

  test(`(b) the next primary frozen for ${lease_s} s (SIGSTOP), longer than its lease, then thawed`, async (t) => {
    await survive(t, 'SIGSTOP', async () => {
      const leader = (await cluster.leader())!;
      const pids = cluster.processes(leader);
      cluster.signal(pids, 'SIGSTOP');
      try {
        await sleep(lease_s * 1_000);
      } finally {
        cluster.signal(pids, 'SIGCONT');
      }
      return leader;
    });
  });

  test('(c) a planned switchover', async (t) => {
    await survive(t, 'switchover', async () => {
      const leader = (await cluster.leader())!;
      const members = await cluster.members();
      const standby =
        cluster.nodes.find((n) => n.name === members.find((m) => m.role === 'sync_standby')?.name) ?? cluster.nodes.find((n) => n !== leader)!;
      cluster.switchover(leader, standby);
      return leader;
    });
  });
});
