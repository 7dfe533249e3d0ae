import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** TEST_DATABASE_URL set: every harness gets a database of its own on that server, dropped afterwards. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL || undefined;
export const onPostgres = testDatabaseUrl !== undefined;

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function freshDatabase(): Promise<TestDatabase> {
  if (!testDatabaseUrl) return { url: 'memory://', drop: async () => {} };
  const name = `gw_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
