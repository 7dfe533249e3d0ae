import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { DatabaseUnavailableError } from '../../src/db/db.ts';
import { openPostgres } from '../../src/db/postgres.ts';
import { onPostgres, testDatabaseUrl } from '../helpers/databases.ts';

/** PostgreSQL's answer to a connection beyond max_connections: an ErrorResponse with SQLSTATE 53300. */
function serverFullMessage(): Buffer {
  const fields = Buffer.concat(
    [
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', '53300'],
      ['M', 'sorry, too many clients already'],
    ]
      .map(([k, v]) => Buffer.from(`${k}${v}\0`))
      .concat(Buffer.from('\0')),
  );
  const header = Buffer.alloc(5);
  header.write('E', 0);
  header.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([header, fields]);
}

/** A server that refuses its first `refusals` connections as a full PostgreSQL does, then passes them to `target`. */
async function fullServer(refusals: number, target?: { host: string; port: number }) {
  let refused = 0;
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    if (refused < refusals || !target) {
      refused++;
      socket.once('data', () => socket.end(serverFullMessage()));
      return;
    }
    const upstream = net.connect(target.port, target.host);
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { port, refusedCount: () => refused, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('a PostgreSQL at its connection limit (53300) is busy, not down', () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  test('a connection that never gets a slot is a busy 503, and the availability switch stays closed', async () => {
    const server = await fullServer(Number.POSITIVE_INFINITY);
    closers.push(server.close);
    const db = openPostgres(`postgres://postgres@127.0.0.1:${server.port}/test`, 2);
    closers.push(() => db.close());
    const started = Date.now();
    const error = await db.query('SELECT 1').then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(error instanceof DatabaseUnavailableError, `expected DatabaseUnavailableError, got ${String(error)}`);
    assert.match(error.message, /busy/);
    assert.equal(db.available, true, 'a full server must not trip the switch: pooled connections still work');
    assert.ok(server.refusedCount() > 1, 'the connection was tried again while waiting for a slot');
    assert.ok(Date.now() - started < 5_000, 'the wait is bounded by the pool wait');
  });

  test('a slot freed while waiting is taken: the statement runs', { skip: !onPostgres && 'needs PostgreSQL' }, async () => {
    const real = new URL(testDatabaseUrl!);
    const server = await fullServer(3, { host: real.hostname, port: Number(real.port || 5432) });
    closers.push(server.close);
    const url = new URL(testDatabaseUrl!);
    url.host = `127.0.0.1:${server.port}`;
    const db = openPostgres(url.toString(), 2);
    closers.push(() => db.close());
    const r = await db.query<{ one: number }>('SELECT 1 AS one');
    assert.equal(r.rows[0]!.one, 1);
    assert.equal(server.refusedCount(), 3);
    assert.equal(db.available, true);
  });
});
