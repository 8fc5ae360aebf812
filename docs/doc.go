// Package docs holds concord's documentation (Markdown, the report's JSON
// Schema and the scripts that reproduce the papers' experiments). It has no
// code of its own: its test keeps architecture.md true to the tree.
package docs
