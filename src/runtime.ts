import { createHmac } from 'node:crypto';
import type { Config } from './config.ts';
import { type AppContext, type Clock, systemClock } from './context.ts';
import { migrate } from './db/migrate.ts';
import { openDb } from './db/open.ts';
import { apiPixCharges, apiPixRefunds } from './pix/pix-charges.ts';
import { openPixRail, type PixRail } from './pix/pix-rail.ts';
import { sandboxProviders } from './providers/sandbox.ts';
import { ApiKeyAuthenticator } from './sellers/authenticator.ts';

/** Opens the database, applies migrations and wires the shared services of one process. */
export async function createContext(config: Config, clock: Clock = systemClock): Promise<AppContext> {
  const db = await openDb(config.databaseUrl, config.dataDir);
  let pix: PixRail | null = null;
  try {
    await migrate(db);
    pix = await openPixRail(config, db, clock);
    const authenticator = new ApiKeyAuthenticator(db);
    await authenticator.start();
    const sandbox = sandboxProviders(config);
    // Derived, so no extra secret to manage; rotating POSTBACK_SECRET re-keys future fingerprints.
    const derive = (purpose: string) => createHmac('sha256', config.postbackSecret).update(purpose).digest('hex');
    return {
      config,
      db,
      clock,
      authenticator,
      providers: {
        ...sandbox,
        pix: apiPixCharges(pix, config),
        refunds: apiPixRefunds(pix, sandbox.refunds, config.pixRail.provider === 'sandbox'),
      },
      pix,
      cardFingerprintKey: derive('card-fingerprint-v1'),
      requestFingerprintKey: derive('request-fingerprint-v1'),
    };
  } catch (error) {
    await pix?.close();
    await db.close();
    throw error;
  }
}

export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.authenticator.stop();
  await ctx.pix.close();
  await ctx.db.close();
}
