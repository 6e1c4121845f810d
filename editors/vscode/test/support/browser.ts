// Launching Debian's Chromium through playwright-core (the browser is never downloaded).

import { chromium, type Browser, type Locator } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** Whether a picker shows its chosen label whole: its width against the width a copy holding only
 * that option takes when nothing constrains it. Works in a page or a frame (the webview in code-server). */
export async function labelFits(scope: { locator(selector: string): Locator }, selector: string): Promise<{ fits: boolean; width: number; needed: number; label: string }> {
  return scope.locator(selector).evaluate((node) => {
    const select = node as HTMLSelectElement;
    const probe = select.cloneNode(false) as HTMLSelectElement;
    probe.append(new Option(select.selectedOptions[0]?.textContent ?? ""));
    probe.style.cssText = "position:absolute;visibility:hidden;width:auto;max-width:none;flex:none";
    select.parentElement!.append(probe);
    const needed = probe.getBoundingClientRect().width;
    probe.remove();
    const width = select.getBoundingClientRect().width;
    return { fits: width + 0.5 >= needed, width, needed, label: select.selectedOptions[0]?.textContent ?? "" };
  });
}
