// The README a VSIX carries: README.md with each relative image (`![alt](docs/images/x.png)`) inlined as a data: URI.
//
// VS Code shows an extension's README in a page that loads images only from https: and data: URLs, and the
// Marketplace only from https:. vsce turns relative links into https ones only when package.json names a GitHub or
// GitLab repository; Tokenscope's names none yet, so a relative image would show as a broken one. Inlined, the picture
// travels inside the README itself and shows wherever the README is shown. Links to other files of the repository
// (docs/…) stay relative: with no public repository there is nothing to point them at (scripts/package.mjs writes the
// VSIX's README with this and passes --no-rewrite-relative-links).
import { existsSync, readFileSync } from 'node:fs';
import { extname, join, normalize, relative } from 'node:path';

const TYPES = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif' };

/** `markdown` with its relative raster images inlined; throws for one that is missing or of another type. */
export function inlineImages(markdown, root) {
  return markdown.replace(/(!\[[^\]]*\]\()([^)\s]+)(\s+"[^"]*")?\)/g, (all, open, link, title = '') => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('#')) return all;
    const file = normalize(join(root, decodeURI(link)));
    if (relative(root, file).startsWith('..')) throw new Error(`the README's image ${link} is outside the repository`);
    const type = TYPES[extname(file).toLowerCase()];
    if (!type) throw new Error(`the README's image ${link} is not PNG, JPEG or GIF (VS Code and the Marketplace refuse SVG)`);
    if (!existsSync(file)) throw new Error(`the README's image ${link} does not exist`);
    return `${open}data:${type};base64,${readFileSync(file).toString('base64')}${title})`;
  });
}
