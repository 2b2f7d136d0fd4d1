/** Polls `check` every `stepMs` until it holds; throws 'timed out' after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5000, stepMs = 10): Promise<void> {
  for (let waited = 0; waited < ms; waited += stepMs) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  throw new Error('timed out');
}
