import { Gauge, type Registry } from 'prom-client';
import type { AppContext } from '../../context.ts';
import { countByState } from './store.ts';

/** `gateway_provider_events{state}` (CONTRACT §14), read from the store at each scrape. */
export function registerProviderEventsGauge(registry: Registry, ctx: AppContext): void {
  new Gauge({
    name: 'gateway_provider_events',
    help: 'Provider events by state (needs_operator: not yet resolved)',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await countByState(ctx.db);
      for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
    },
  });
}
