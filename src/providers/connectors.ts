/**
 * The one place that knows every connector: each rail's settings read from the environment (each
 * connector's own loader), the connectors opened, and what the rest of the gateway gets of them: the
 * Providers port, their inbound endpoints and their jobs.
 */
import type { Config } from '../config.ts';
import { type Env, oneOf } from '../config-values.ts';
import type { Db } from '../db/db.ts';
import type { ProviderName } from '../domain/provider-facts.ts';
import type { PaymentMethod } from '../domain/transaction-states.ts';
import type { Job } from '../workers/job.ts';
import { type CardRailConfig, loadCardRailConfig } from './adyen/config.ts';
import { type AdyenConnector, adyenConnector } from './adyen/connector.ts';
import { createAdyenFollowupJob } from './adyen/followup-job.ts';
import { adyenNotifications } from './adyen/notifications.ts';
import { pixCallback } from './api-pix/callback.ts';
import { type ApiPixConfig, loadApiPixConfig } from './api-pix/config.ts';
import { type ApiPixConnector, apiPixConnector } from './api-pix/connector.ts';
import { createPixReconcileJob } from './api-pix/reconcile-job.ts';
import { createFollowupJob, heldFactsJob } from './events/jobs.ts';
import type { Connector, InboundEndpoint, Providers } from './ports.ts';
import { cardAutopilotJob, payoutAutopilotJob } from './sandbox/autopilot.ts';
import { sandboxConnector } from './sandbox/processors.ts';
import { type SandboxPsp, startSandboxPsp } from './sandbox/psp/index.ts';

/** What the environment says of each rail (CONTRACT §11). */
export interface RailSettings {
  pixRail: ApiPixConfig;
  cardRail: CardRailConfig;
  /** Cashouts and boletos: only the sandbox so far (CONTRACT §11.3 and §11.4 name their real connector). */
  payoutProvider: 'sandbox';
  boletoProvider: 'sandbox';
}

export function loadRailSettings(env: Env, core: Pick<Config, 'postbackSecret'>): RailSettings {
  return {
    pixRail: loadApiPixConfig(env, core.postbackSecret),
    cardRail: loadCardRailConfig(env),
    payoutProvider: oneOf(env, 'PAYOUT_PROVIDER', ['sandbox'] as const, 'sandbox'),
    boletoProvider: oneOf(env, 'BOLETO_PROVIDER', ['sandbox'] as const, 'sandbox'),
  };
}

/** The connectors of one process, with the handles tests and start-up reach for. */
export interface Rails {
  providers: Providers;
  jobs: Job[];
  apiPix: ApiPixConnector;
  /** The embedded PSP (PIX_PROVIDER=sandbox), its state in the database; null with a real PSP. */
  psp: SandboxPsp | null;
  adyen: AdyenConnector | null;
}

interface Deps {
  config: Config;
  db: Db;
  clock: { now(): Date };
  installationId: string;
}

export async function openRails(settings: RailSettings, deps: Deps): Promise<Rails> {
  const { config, installationId } = deps;
  const pix = settings.pixRail;
  const psp =
    pix.provider === 'sandbox'
      ? await startSandboxPsp({
          db: deps.db,
          clock: deps.clock,
          receiverKey: config.pixReceiverKey,
          merchantName: config.pixMerchantName,
          merchantCity: config.pixMerchantCity,
          port: pix.sandboxPspPort,
        })
      : null;
  const connection = psp ? { baseUrl: psp.apiUrl, tokenUrl: psp.tokenUrl, clientId: psp.clientId, clientSecret: psp.clientSecret } : pix.api!;
  const apiPix = apiPixConnector(connection, {
    installationId,
    receiverKey: config.pixReceiverKey,
    merchantName: config.pixMerchantName,
    merchantCity: config.pixMerchantCity,
    sandbox: psp !== null,
  });
  const adyen = settings.cardRail.adyen ? adyenConnector(settings.cardRail.adyen, installationId) : null;
  const connectors: Record<ProviderName, Connector | null> = { sandbox: sandboxConnector(config.boletoBankCode), 'api-pix': apiPix, adyen };

  let listening: string | null = null;
  const webhookUrl = () => {
    const base = pix.webhookBaseUrl ?? listening;
    return base === null ? null : `${base}/providers/pix/${pix.webhookSecret}`;
  };
  const inbound: InboundEndpoint[] = [
    pixCallback(apiPix, pix.webhookSecret, installationId),
    ...(adyen ? [adyenNotifications(adyen.connection)] : []),
  ];
  const rails: Record<PaymentMethod | 'PAYOUT', ProviderName> = {
    PIX: 'api-pix',
    CREDIT_CARD: adyen ? 'adyen' : 'sandbox',
    DEBIT_CARD: adyen ? 'adyen' : 'sandbox',
    BOLETO: 'sandbox',
    PAYOUT: 'sandbox',
  };
  const providers: Providers = {
    rails,
    connector(name) {
      const connector = connectors[name];
      if (!connector) throw new Error(`the ${name} connector is not configured in this process`);
      return connector;
    },
    inbound,
    sandboxPix: psp && { pay: (txid, amountCents) => psp.pay(txid, amountCents) },
    listeningAt(baseUrl) {
      listening = baseUrl.replace(/\/+$/, '');
    },
    async close() {
      await apiPix.client.close();
      await psp?.close();
      await adyen?.client.close();
    },
  };
  const jobs: Job[] = [
    heldFactsJob,
    createFollowupJob(pix.reconcileSeconds * 1000),
    createPixReconcileJob(apiPix, { reconcileSeconds: pix.reconcileSeconds, receiverKey: config.pixReceiverKey, installationId, webhookUrl }),
    ...(adyen ? [createAdyenFollowupJob(adyen)] : []),
    ...(config.sandboxAutopilot ? [cardAutopilotJob, payoutAutopilotJob] : []),
  ];
  return { providers, jobs, apiPix, psp, adyen };
}
