/**
 * The one place that knows every connector: each rail's settings read from the environment (each
 * connector's own loader), the connectors opened, and what the rest of the gateway gets of them: the
 * Providers port, their inbound endpoints and their jobs.
 */
import type { Config } from '../config.ts';
import type { Env } from '../config-values.ts';
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
import { type EfiBoletoConnector, efiBoletoConnector } from './efi/boleto-connector.ts';
import { createBoletoJob } from './efi/boleto-job.ts';
import { chargeNotifications } from './efi/charge-notifications.ts';
import { createEfiChargesClient } from './efi/charges-client.ts';
import { type BoletoRailConfig, loadBoletoRailConfig, loadPayoutRailConfig, type PayoutRailConfig } from './efi/config.ts';
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
  boletoRail: BoletoRailConfig;
}

export function loadRailSettings(env: Env, core: Pick<Config, 'postbackSecret' | 'pixReceiverKey'>): RailSettings {
  return {
    pixRail: loadApiPixConfig(env, core.postbackSecret),
    cardRail: loadCardRailConfig(env),
    payoutRail: loadPayoutRailConfig(env, core.pixReceiverKey),
    boletoRail: loadBoletoRailConfig(env, core.postbackSecret),
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
  efiBoleto: EfiBoletoConnector;
}

interface Deps {
  config: Config;
  db: Db;
  clock: { now(): Date };
  installationId: string;
}

/** The embedded PSP, when PIX, payouts or boletos are the sandbox's. */
async function openSandboxPsp(settings: RailSettings, { config, db, clock }: Deps): Promise<SandboxPsp | null> {
  const rails = [settings.pixRail, settings.payoutRail, settings.boletoRail];
  if (rails.every((r) => r.provider !== 'sandbox')) return null;
  return startSandboxPsp({
    db,
    clock,
    receiverKey: config.pixReceiverKey,
    merchantName: config.pixMerchantName,
    merchantCity: config.pixMerchantCity,
    port: settings.pixRail.sandboxPspPort,
    boletoBankCode: config.boletoBankCode,
  });
}

/** The boleto connector: Efí's Cobranças API, or the embedded PSP's through the same connector. */
function openBoletos(boleto: BoletoRailConfig, psp: SandboxPsp | null, { installationId, clock }: Deps, listening: () => string | null) {
  const notificationUrl = () => {
    const base = boleto.webhookBaseUrl ?? listening();
    return base === null ? null : `${base}/providers/efi/charges/${boleto.webhookSecret}`;
  };
  const baseUrl = boleto.efi?.baseUrl ?? psp!.efiUrl;
  const transport = createPixTransport({
    baseUrl,
    tokenUrl: boleto.efi?.tokenUrl ?? `${psp!.efiUrl}/v1/authorize`,
    clientId: boleto.efi?.clientId ?? psp!.clientId,
    clientSecret: boleto.efi?.clientSecret ?? psp!.clientSecret,
    ca: boleto.efi?.ca,
    grantBody: 'json',
  });
  return {
    efiBoleto: efiBoletoConnector(createEfiChargesClient(baseUrl, transport), {
      installationId,
      clock,
      notificationUrl,
      sandbox: boleto.provider === 'sandbox',
    }),
    boletoTransport: transport,
  };
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
  let listening: string | null = null;
  const boletoRail = settings.boletoRail;
  const { efiBoleto, boletoTransport } = openBoletos(boletoRail, psp, deps, () => listening);
  const connectors: Record<ProviderName, Connector | null> = {
    sandbox: sandboxConnector(),
    'api-pix': apiPix,
    adyen,
    // One Efí connector: payouts (its Pix API) and boletos (its Cobranças API), each on its own client.
    efi: { ...efi, ...efiBoleto },
  };

  const webhookUrl = () => {
    const base = pix.webhookBaseUrl ?? listening;
    return base === null ? null : `${base}/providers/pix/${pix.webhookSecret}`;
  };
  const inbound: InboundEndpoint[] = [
    pixCallback(apiPix, pix.webhookSecret, installationId, efi),
    chargeNotifications(efiBoleto, boletoRail.webhookSecret, installationId),
    ...(adyen ? [adyenNotifications(adyen.connection)] : []),
  ];
  const rails: Record<PaymentMethod | 'PAYOUT', ProviderName> = {
    PIX: 'api-pix',
    CREDIT_CARD: adyen ? 'adyen' : 'sandbox',
    DEBIT_CARD: adyen ? 'adyen' : 'sandbox',
    BOLETO: 'efi',
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
    sandboxBoleto: boletoRail.provider === 'sandbox' && psp ? { pay: (chargeId, amountCents) => psp.payBoleto(chargeId, amountCents) } : null,
    listeningAt(baseUrl) {
      listening = baseUrl.replace(/\/+$/, '');
    },
    async close() {
      await apiPix.client.close();
      await psp?.close();
      await adyen?.client.close();
      if (sendTransport !== apiPix.client.transport) await sendTransport.close();
      await boletoTransport.close();
    },
  };
  const jobs: Job[] = [
    heldFactsJob,
    createFollowupJob(pix.reconcileSeconds * 1000),
    createPixReconcileJob(apiPix, { reconcileSeconds: pix.reconcileSeconds, receiverKey: config.pixReceiverKey, installationId, webhookUrl }),
    createPayoutJob(efi, { reconcileSeconds: pix.reconcileSeconds, payerKey: payout.payerKey, webhookUrl }),
    createBoletoJob(efiBoleto, { reconcileSeconds: pix.reconcileSeconds }),
    ...(adyen ? [createAdyenFollowupJob(adyen)] : []),
    ...(config.sandboxAutopilot ? [cardAutopilotJob, payoutAutopilotJob] : []),
  ];
  return { providers, jobs, apiPix, psp, adyen, efi, efiBoleto };
}
