/**
 * An action of the panel failed on the host (`error`, ./protocol.ts): one line at the foot of the panel, over
 * the content, until dismissed; a later error replaces it. The text is the host's, rendered as text.
 */
import { h, icon } from '../dom';
import './error.css';

export function showPanelError(message: string): void {
  document.querySelector('.panel-error')?.remove();
  const close = h('button', { class: 'panel-error-close', type: 'button', title: 'Dismiss', 'aria-label': 'Dismiss' }, icon('close'));
  const banner = h('div', { class: 'panel-error', role: 'alert' }, icon('error'), h('span', { class: 'panel-error-text' }, message), close);
  close.addEventListener('click', () => banner.remove());
  document.body.prepend(banner);
}
