import { createHmac, randomUUID } from 'node:crypto';
import { type Config, type LoadedConfig, loadConfig } from './config.ts';
import type { Env } from './config-values.ts';
import { type AppContext, type Clock, systemClock } from './context.ts';
import { backoffMs, DatabaseUnavailableError, type Db } from './db/db.ts';
import { migrate } from './db/migrate.ts';
import { openDb } from './db/open.ts';
import { one, run, sql } from './db/sql.ts';
import { loadRailSettings, openRails, type RailSettings, type Rails } from './providers/connectors.ts';
import { ApiKeyAuthenticator } from './sellers/authenticator.ts';

/** Everything the environment says: the gateway's own settings and each rail's. */
export type LoadedSettings = LoadedConfig & RailSettings;
/** The settings a process runs with: the environment's, with what the installation made for itself. */
export type Settings = Config & RailSettings;

export function loadSettings(env: Env): LoadedSettings {
  const core = loadConfig(env);
  return { ...core, ...loadRailSettings(env, core) };
}

/** A process's context, with the rails' handles that only start-up and tests reach for. */
export interface Runtime extends AppContext {
  rails: Rails;
}

// A process started while its database is away (a failover, a node restarting) waits for it this long
// rather than exiting at once; a process manager restarts it after that.
const startup_wait_ms = 60_000;

async function databaseAnswers(db: Db): Promise<void> {
  const deadline = Date.now() + startup_wait_ms;
  for (let failures = 0; ; failures++) {
    try {
      await db.query('SELECT 1');
      return;
    } catch (error) {
      if (!(error instanceof DatabaseUnavailableError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffMs(failures, 100, 2_000)));
    }
  }
}

/** Opens the database, applies migrations and wires the shared services of one process. */
export async function createContext(settings: LoadedSettings, clock: Clock = systemClock): Promise<Runtime> {
  const db = await openDb(settings.databaseUrl, settings.dataDir);
  let rails: Rails | null = null;
  try {
    await databaseAnswers(db);
    await migrate(db);
    const installationId = one(await run<{ installation_id: string }>(db, sql`SELECT installation_id FROM installation`)).installation_id;
    const resolved = await withInstallationValues(db, settings);
    rails = await openRails(resolved, { config: resolved, db, clock, installationId });
    const authenticator = new ApiKeyAuthenticator(db);
    await authenticator.start();
    // Derived, so no extra secret to manage; rotating POSTBACK_SECRET re-keys future fingerprints.
    const derive = (purpose: string) => createHmac('sha256', settings.postbackSecret).update(purpose).digest('hex');
    return {
      config: resolved,
      db,
      clock,
      authenticator,
      providers: rails.providers,
      sandbox: rails.sandbox,
      installationId,
      rails,
      cardFingerprintKey: derive('card-fingerprint-v1'),
      requestFingerprintKey: derive('request-fingerprint-v1'),
    };
  } catch (error) {
    await rails?.providers.close();
    await db.close();
    throw error;
  }
}

/**
 * The settings with what the installation made for itself: a PIX receiver key none was configured
 * (PostgreSQL), made by the first process and read by every other, so that API and worker processes
 * write the same key into BR Codes and register the same key's webhook.
 */
async function withInstallationValues(db: Db, settings: LoadedSettings): Promise<Settings> {
  const key = settings.pixReceiverKey;
  if (key !== null)
    return { ...settings, pixReceiverKey: key, payoutRail: { ...settings.payoutRail, payerKey: settings.payoutRail.payerKey ?? key } };
  const made = one(
    await run<{ pix_receiver_key: string }>(
      db,
      sql`UPDATE installation SET pix_receiver_key = coalesce(pix_receiver_key, ${randomUUID()}) RETURNING pix_receiver_key`,
    ),
  ).pix_receiver_key;
  return { ...settings, pixReceiverKey: made, payoutRail: { ...settings.payoutRail, payerKey: settings.payoutRail.payerKey ?? made } };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.authenticator.stop();
  await ctx.providers.close();
  await ctx.db.close();
}
