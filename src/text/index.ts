/**
 * The text/ layer's public surface: other layers import from here, files inside text/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: text for people and for bash: shown with hidden characters visible, written as shell words, bytes that
 * are not UTF-8 read as text. Pure.
 */
export { codeSpan, displayCommand, displayScript, displayWord, fit, PROMPT_MAX, secretAccessText, visibleText } from './display.js';
export { hasRawBytes, readBytes } from './raw-bytes.js';
export { shellCommand, shellWord } from './shell-words.js';
