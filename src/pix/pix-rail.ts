/**
 * The PIX rail of one process (CONTRACT §11.1): the API Pix connector, pointed at a real PSP or at
 * the embedded one, which this process then runs (its state is in the database, so every process of
 * the gateway sees the same PSP).
 */
import type { Config } from '../config.ts';
import type { Db } from '../db/db.ts';
import { type ApiPixClient, createApiPixClient } from '../pix-rail/api-pix-client.ts';
import { type SandboxPsp, startSandboxPsp } from '../sandbox-psp/index.ts';

export interface PixRail {
  /** Replaceable (tests put a checking proxy in front of the PSP); everything reads it at each call. */
  client: ApiPixClient;
  /** The embedded PSP (PIX_PROVIDER=sandbox), for its test levers; null with a real PSP. */
  psp: SandboxPsp | null;
  /** The URL the PSP is told to call (it appends /pix); null until this process knows where it listens. */
  webhookUrl(): string | null;
  /** This process's own address, the callback base when PIX_WEBHOOK_BASE_URL is not set. */
  listeningAt(baseUrl: string): void;
  close(): Promise<void>;
}

export async function openPixRail(config: Config, db: Db, clock: { now(): Date }): Promise<PixRail> {
  const settings = config.pixRail;
  let listening: string | null = null;
  const webhookUrl = () => {
    const base = settings.webhookBaseUrl ?? listening;
    return base === null ? null : `${base}/providers/pix/${settings.webhookSecret}`;
  };
  const psp =
    settings.provider === 'sandbox'
      ? await startSandboxPsp({
          db,
          clock,
          receiverKey: config.pixReceiverKey,
          merchantName: config.pixMerchantName,
          merchantCity: config.pixMerchantCity,
          port: settings.sandboxPspPort,
        })
      : null;
  const connection = psp ? { baseUrl: psp.apiUrl, tokenUrl: psp.tokenUrl, clientId: psp.clientId, clientSecret: psp.clientSecret } : settings.api!;
  const rail: PixRail = {
    client: createApiPixClient(connection),
    psp,
    webhookUrl,
    listeningAt(baseUrl) {
      listening = baseUrl.replace(/\/+$/, '');
    },
    async close() {
      await rail.client.close();
      await psp?.close();
    },
  };
  return rail;
}
