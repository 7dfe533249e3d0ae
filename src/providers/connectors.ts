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
import { createPixTransport } from './api-pix/client/api-pix-client.ts';
import { type ApiPixConfig, loadApiPixConfig } from './api-pix/config.ts';
import { type ApiPixConnector, apiPixConnector } from './api-pix/connector.ts';
import { createPixReconcileJob } from './api-pix/reconcile-job.ts';
import { loadPayoutRailConfig, type PayoutRailConfig } from './efi/config.ts';
import { type EfiPayoutConnector, efiPayoutConnector } from './efi/connector.ts';
import { createPayoutJob } from './efi/payout-job.ts';
import { createEfiPixSendClient } from './efi/pix-send-client.ts';
import { createFollowupJob, heldFactsJob } from './events/jobs.ts';
import type { Connector, InboundEndpoint, Providers } from './ports.ts';
import { cardAutopilotJob, payoutAutopilotJob } from './sandbox/autopilot.ts';
import { sandboxConnector } from './sandbox/processors.ts';
import { type SandboxPsp, startSandboxPsp } from './sandbox/psp/index.ts';

/** What the environment says of each rail (CONTRACT §11). */
export interface RailSettings {
  pixRail: ApiPixConfig;
  cardRail: CardRailConfig;
  payoutRail: PayoutRailConfig;
  /** Boletos: only the sandbox so far (CONTRACT §11.4 names their real connector). */
  boletoProvider: 'sandbox';
}

export function loadRailSettings(env: Env, core: Pick<Config, 'postbackSecret' | 'pixReceiverKey'>): RailSettings {
  return {
    pixRail: loadApiPixConfig(env, core.postbackSecret),
    cardRail: loadCardRailConfig(env),
    payoutRail: loadPayoutRailConfig(env, core.pixReceiverKey),
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
  efi: EfiPayoutConnector;
}

interface Deps {
  config: Config;
  db: Db;
  clock: { now(): Date };
  installationId: string;
}

/** The embedded PSP, when PIX or payouts are the sandbox's. */
async function openSandboxPsp(settings: RailSettings, { config, db, clock }: Deps): Promise<SandboxPsp | null> {
  if (settings.pixRail.provider !== 'sandbox' && settings.payoutRail.provider !== 'sandbox') return null;
  return startSandboxPsp({
    db,
    clock,
    receiverKey: config.pixReceiverKey,
    merchantName: config.pixMerchantName,
    merchantCity: config.pixMerchantCity,
    port: settings.pixRail.sandboxPspPort,
  });
}

/** The API Pix connector, to a real PSP or to the embedded one. */
function openApiPix(pix: ApiPixConfig, psp: SandboxPsp | null, { config, installationId }: Deps): ApiPixConnector {
  const sandbox = pix.provider === 'sandbox';
  const connection = sandbox ? { baseUrl: psp!.apiUrl, tokenUrl: psp!.tokenUrl, clientId: psp!.clientId, clientSecret: psp!.clientSecret } : pix.api!;
  return apiPixConnector(connection, {
    installationId,
    receiverKey: config.pixReceiverKey,
    merchantName: config.pixMerchantName,
    merchantCity: config.pixMerchantCity,
    sandbox,
  });
}

/** The payout connector: Efí itself, or the embedded PSP through the same connector. */
function openPayouts(payout: PayoutRailConfig, psp: SandboxPsp | null, apiPix: ApiPixConnector | null, installationId: string) {
  // One transport per PSP: with the embedded PSP on both rails, the API Pix client's connections and token serve the sends too.
  const sendTransport = payout.efi
    ? createPixTransport(payout.efi)
    : apiPix
      ? apiPix.client.transport
      : createPixTransport({ baseUrl: psp!.efiUrl, tokenUrl: psp!.tokenUrl, clientId: psp!.clientId, clientSecret: psp!.clientSecret });
  const efi = efiPayoutConnector(createEfiPixSendClient(payout.efi?.baseUrl ?? psp!.efiUrl, sendTransport), {
    payerKey: payout.payerKey,
    installationId,
  });
  return { efi, sendTransport };
}

export async function openRails(settings: RailSettings, deps: Deps): Promise<Rails> {
  const { config, installationId } = deps;
  const pix = settings.pixRail;
  const payout = settings.payoutRail;
  const psp = await openSandboxPsp(settings, deps);
  const apiPix = openApiPix(pix, psp, deps);
  const adyen = settings.cardRail.adyen ? adyenConnector(settings.cardRail.adyen, installationId) : null;
  const { efi, sendTransport } = openPayouts(payout, psp, pix.provider === 'sandbox' ? apiPix : null, installationId);
  const connectors: Record<ProviderName, Connector | null> = {
    sandbox: sandboxConnector(config.boletoBankCode),
    'api-pix': apiPix,
    adyen,
    efi,
  };

  let listening: string | null = null;
  const webhookUrl = () => {
    const base = pix.webhookBaseUrl ?? listening;
    return base === null ? null : `${base}/providers/pix/${pix.webhookSecret}`;
  };
  const inbound: InboundEndpoint[] = [
    pixCallback(apiPix, pix.webhookSecret, installationId, efi),
    ...(adyen ? [adyenNotifications(adyen.connection)] : []),
  ];
  const rails: Record<PaymentMethod | 'PAYOUT', ProviderName> = {
    PIX: 'api-pix',
    CREDIT_CARD: adyen ? 'adyen' : 'sandbox',
    DEBIT_CARD: adyen ? 'adyen' : 'sandbox',
    BOLETO: 'sandbox',
    PAYOUT: 'efi',
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
      if (sendTransport !== apiPix.client.transport) await sendTransport.close();
    },
  };
  const jobs: Job[] = [
    heldFactsJob,
    createFollowupJob(pix.reconcileSeconds * 1000),
    createPixReconcileJob(apiPix, { reconcileSeconds: pix.reconcileSeconds, receiverKey: config.pixReceiverKey, installationId, webhookUrl }),
    createPayoutJob(efi, { reconcileSeconds: pix.reconcileSeconds, payerKey: payout.payerKey, webhookUrl }),
    ...(adyen ? [createAdyenFollowupJob(adyen)] : []),
    ...(config.sandboxAutopilot ? [cardAutopilotJob, payoutAutopilotJob] : []),
  ];
  return { providers, jobs, apiPix, psp, adyen, efi };
}
