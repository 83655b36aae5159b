// Types of residual-mt/widget: importing it (in a browser) defines the
// <residual-mt-translate> element and, unless the page has one, adds one in a
// corner of the page; its options are the script URL's query or the
// element's attributes: model, catalog, source, root.

/** The <residual-mt-translate> element: a language menu that translates the page live. */
export declare class TranslateWidget extends HTMLElement {
  connectedCallback(): void;
}
