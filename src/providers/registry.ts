/**
 * The registry of one process (CONTRACT §11): capability → account → port. New payments of each
 * method and new cashouts are made with the account configured for their rail; everything after
 * (capture, refund, cancel, devolução, read-back) goes to the port of the account recorded on the
 * transaction, refund or cashout, and an account this process does not have fails, never elsewhere.
 */
import type { PaymentMethod } from '../domain/transaction-states.ts';
import {
  AccountNotConfigured,
  CAPABILITY_OF,
  type Capability,
  type InboundEndpoint,
  type Port,
  type PortOf,
  type ProviderName,
  type Providers,
  type RailPorts,
  type SalePort,
} from './ports.ts';

export interface RegistryParts {
  /** The port of each rail, as configured now. */
  rails: RailPorts;
  inbound: InboundEndpoint[];
  listeningAt(baseUrl: string): Promise<void>;
  close(): Promise<void>;
}

export function createRegistry(parts: RegistryParts): Providers {
  const ports = new Map<string, Port>();
  const key = (capability: Capability, account: string) => `${capability}\n${account}`;
  const railPorts: RailPorts = { ...parts.rails };
  const rails = {} as Record<keyof RailPorts, string>;
  const add = (port: Port, options: { rail?: (keyof RailPorts)[] } = {}) => {
    ports.set(key(port.capability, port.account.id), port);
    for (const method of options.rail ?? []) {
      if (CAPABILITY_OF[method] !== port.capability) throw new Error(`a ${port.capability} port cannot be the ${method} rail`);
      (railPorts as Record<keyof RailPorts, Port>)[method] = port;
      rails[method] = port.account.id;
    }
  };
  for (const [method, port] of Object.entries(parts.rails)) add(port, { rail: [method as keyof RailPorts] });
  return {
    rails,
    port<C extends Capability>(capability: C, account: string) {
      const port = ports.get(key(capability, account));
      if (!port) throw new AccountNotConfigured(capability, account);
      return port as PortOf<C>;
    },
    rail: (method) => railPorts[method],
    all: <C extends Capability>(capability: C) => [...ports.values()].filter((p): p is PortOf<C> => p.capability === capability),
    add,
    inbound: parts.inbound,
    listeningAt: parts.listeningAt,
    close: parts.close,
  };
}

/** What a transaction, refund or cashout records of where it was made: its account, or (made before accounts) its connector. */
export interface MadeWith {
  account: string | null;
  provider: ProviderName;
}

/**
 * The port of what was made with `made`. A row without an account (made before accounts, or by a
 * process of the release before) is its connector's configured account's, when that rail is still
 * that connector; otherwise it fails like any account no longer configured.
 */
export function portOf<C extends Capability>(providers: Providers, capability: C, made: MadeWith): PortOf<C> {
  if (made.account !== null) return providers.port(capability, made.account);
  const configured = providers
    .all(capability)
    .find((p) => p.account.connector === made.provider && Object.values(providers.rails).includes(p.account.id));
  if (!configured) throw new AccountNotConfigured(capability, `${made.provider} (no account recorded)`);
  return configured;
}

/** The port of a sale's payment method, for what follows its creation. */
export const portOfSale = (providers: Providers, sale: MadeWith & { payment_method: PaymentMethod }): SalePort =>
  portOf(providers, CAPABILITY_OF[sale.payment_method], sale) as SalePort;
