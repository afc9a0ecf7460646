/** `markdown` with its relative raster images inlined as data: URIs; throws for one that is missing or of another type. */
export function inlineImages(markdown: string, root: string): string;
