import type pg from 'pg';
import { CommitOutcomeUnknownError, DatabaseUnavailableError, type Queryable } from './db.ts';

// What a primary says when a COMMIT stopped waiting for its synchronous standby: committed here, maybe
// not on the standby, so maybe not on the primary that a failover makes next.
const sync_wait_cancelled = /wait for synchronous replication/;

/**
 * COMMIT, whose outcome is unknown when the connection drops during it, or when the server stopped
 * waiting for its synchronous standby (it then says so in a warning and reports success): the caller
 * must answer neither success nor failure (CONTRACT §16: 503, and the keyed retry finds what was kept).
 */
export async function commit(client: pg.PoolClient, q: Queryable): Promise<void> {
  let unreplicated = false;
  const onNotice = (notice: { message?: string }) => {
    if (sync_wait_cancelled.test(notice.message ?? '')) unreplicated = true;
  };
  client.on('notice', onNotice);
  try {
    await q.query('COMMIT');
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) throw new CommitOutcomeUnknownError('connection lost during COMMIT', { cause: error });
    throw error;
  } finally {
    client.off('notice', onNotice);
  }
  if (unreplicated) throw new CommitOutcomeUnknownError('COMMIT not confirmed by the synchronous standby');
}
