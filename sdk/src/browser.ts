// pagar-gateway-sdk/browser: for the shopper's page, not for Node. It reads what an issuer's 3-D
// Secure needs of the shopper's browser (a sale's `authentication.browser`, CONTRACT §11.2) from
// navigator, screen and Date; the page sends it to the seller's server, which adds the shopper's IP
// and its return URL and creates the sale. No import but types: it runs in any browser as it is.
import type { BrowserInfo } from './types.ts';

export type { BrowserInfo };

/**
 * What a browser sends as `Accept` when it navigates to a page. A script cannot read the header its
 * own browser sent: this is the value of current browsers' page loads. A seller's server that saw the
 * shopper's real header (on the checkout page's request) may pass that instead.
 */
export const DEFAULT_ACCEPT_HEADER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

export interface BrowserInfoOptions {
  /** The shopper's `Accept` header as the seller's server received it; `DEFAULT_ACCEPT_HEADER` otherwise. */
  acceptHeader?: string;
}

// The values Adyen's browserInfo.colorDepth accepts (the vendored Checkout API file): a depth in
// between is rounded down to one of them.
const color_depths = [1, 4, 8, 15, 16, 24, 30, 32, 48];
// What the gateway takes (the sale's BrowserInput schema).
const language_tag = /^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*$/;
const max_text = 2048;
const max_language = 35;
const max_screen = 100_000;

type NavigatorLike = { userAgent?: string; language?: string; languages?: readonly string[]; javaEnabled?: () => boolean };
type ScreenLike = { colorDepth?: number; height?: number; width?: number };

/**
 * The shopper's browser, for the sale's `authentication.browser`: userAgent, language, screen and
 * time zone as the browser tells them, `javaEnabled` (false in current browsers), and
 * `acceptHeader`, which no script can read (see DEFAULT_ACCEPT_HEADER). Values are kept within what
 * the gateway accepts. Throws outside a browser (no `navigator` or `screen`).
 */
export function browserInfo(options: BrowserInfoOptions = {}): BrowserInfo {
  const nav = (globalThis as { navigator?: NavigatorLike }).navigator;
  const screen = (globalThis as { screen?: ScreenLike }).screen;
  if (!nav || !screen) throw new Error('browserInfo() runs in the shopper’s browser: there is no navigator or screen here');
  return {
    userAgent: String(nav.userAgent ?? '').slice(0, max_text),
    acceptHeader: (options.acceptHeader ?? DEFAULT_ACCEPT_HEADER).slice(0, max_text),
    language: languageOf(nav),
    colorDepth: colorDepth(screen.colorDepth),
    screenHeight: within(screen.height, 1, max_screen),
    screenWidth: within(screen.width, 1, max_screen),
    // Minutes to add to local time to get UTC: 180 in Brasília.
    timeZoneOffset: new Date().getTimezoneOffset(),
    javaEnabled: javaEnabled(nav),
  };
}

/** navigator.language, else the first of navigator.languages that is a language tag; pt-BR when none is. */
function languageOf(nav: NavigatorLike): string {
  const tags = [nav.language, ...(nav.languages ?? [])];
  return tags.find((t): t is string => typeof t === 'string' && t.length <= max_language && language_tag.test(t)) ?? 'pt-BR';
}

function colorDepth(bits: number | undefined): number {
  const n = within(bits, 1, 48);
  return color_depths.filter((d) => d <= n).at(-1) ?? 1;
}

/** An integer from min to max; min when the browser gave no number. */
function within(value: number | undefined, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return min;
  return Math.min(max, Math.max(min, Math.round(value)));
}

// navigator.javaEnabled() is false in every current browser, and may be missing altogether.
function javaEnabled(nav: NavigatorLike): boolean {
  try {
    return typeof nav.javaEnabled === 'function' && nav.javaEnabled() === true;
  } catch {
    return false;
  }
}
