import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config-values.ts';
import { DatabaseUrlError, parseDatabaseUrl } from '../../src/db/hosts.ts';
import { openDb } from '../../src/db/open.ts';

describe('DATABASE_URL read as libpq reads it', () => {
  it('lists every host in the order written, a missing port taking 5432', () => {
    const t = parseDatabaseUrl('postgres://gw:s%40cret@db1:6432,db2,[::1]:5433/gateway?target_session_attrs=read-write&sslmode=require');
    assert.deepEqual(t.hosts, [
      { host: 'db1', port: 6432 },
      { host: 'db2', port: 5432 },
      { host: '::1', port: 5433 },
    ]);
    assert.equal(t.attrs, 'read-write');
    assert.equal(t.config.user, 'gw');
    assert.equal(t.config.password, 's@cret');
    assert.equal(t.config.database, 'gateway');
    assert.ok(t.config.ssl, "sslmode=require is still pg's to read");
    assert.equal((t.config as Record<string, unknown>).target_session_attrs, undefined, 'not sent to the server as a setting');
    assert.equal((t.config as Record<string, unknown>).host, undefined);
  });

  it('keeps a one-host URL as it was: any session, its own port', () => {
    const t = parseDatabaseUrl('postgresql://postgres@127.0.0.1:5432/test');
    assert.deepEqual(t.hosts, [{ host: '127.0.0.1', port: 5432 }]);
    assert.equal(t.attrs, 'any');
    assert.equal(t.config.database, 'test');
  });

  it('takes primary, and a socket directory given as a parameter', () => {
    assert.equal(parseDatabaseUrl('postgres://a,b/db?target_session_attrs=primary').attrs, 'primary');
    const t = parseDatabaseUrl('postgres:///gateway?host=/var/run/postgresql');
    assert.deepEqual(t.hosts, [{ host: '/var/run/postgresql', port: 5432 }]);
  });

  it('refuses what the gateway cannot write through, naming it', () => {
    for (const [url, words] of [
      ['postgres://a,b/db?target_session_attrs=standby', /target_session_attrs=standby/],
      ['postgres://a,b/db?target_session_attrs=read-only', /read-only is not one/],
      ['postgres://a:99999,b/db', /not a port/],
      ['postgres://a:1,a:1/db', /twice/],
      ['mysql://a/db', /postgres:\/\//],
    ] as const) {
      assert.throws(
        () => parseDatabaseUrl(url),
        (e: Error) => e instanceof DatabaseUrlError && words.test(e.message),
        url,
      );
    }
  });
});

describe('a DATABASE_URL the gateway cannot use stops start-up', () => {
  it('with a configuration error naming the variable, before any connection', async () => {
    await assert.rejects(
      openDb('postgres://h1,h2/db?target_session_attrs=standby', '.'),
      (e: Error) => e instanceof ConfigError && /^DATABASE_URL target_session_attrs=standby/.test(e.message),
    );
  });
});
