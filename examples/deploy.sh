#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A small build-and-deploy script to profile command by command:
#
#     sudo tsarun --bash examples/deploy.sh [WORKDIR]
#
# It builds a tiny static site in WORKDIR (a new temporary directory by
# default, removed at the end): renders pages in a loop, checks them
# through a pipeline, compresses them in a background job while it writes
# the manifest, packs a release in a subshell, unpacks it into a release
# directory and switches a `current` link to it. It needs coreutils, grep,
# gzip and tar, and touches nothing outside WORKDIR.
set -euo pipefail

tmpwork=
if [ $# -gt 0 ]; then
	work=$1
	mkdir -p "$work"
else
	work=$(mktemp -d)
	tmpwork=$work
fi
src=$work/site
lock=$work/.deploy.lock
mkdir -p "$src"

log() { printf 'deploy: %s\n' "$*" >&2; }

# One deploy at a time in WORKDIR; the lock goes, whatever happens.
cleanup() {
	rm -f "$lock"
	if [ -n "$tmpwork" ]; then
		rm -rf "$tmpwork"
	fi
}
if ! (set -o noclobber && echo $$ >"$lock") 2>/dev/null; then
	log "another deploy holds $lock"
	exit 1
fi
trap cleanup EXIT

render_page() {
	local name=$1 paragraphs=$2 i
	{
		printf '<html><head><title>%s</title></head><body>\n' "$name"
		for ((i = 0; i < paragraphs; i++)); do
			printf '<p>%s, paragraph %d</p>\n' "$name" "$i"
		done
		printf '</body></html>\n'
	} >"$src/$name.html"
}

build_pages() {
	local page
	for page in index about blog contact; do
		render_page "$page" 100
	done
}

# How many pages are complete (close their html element).
count_complete() {
	grep -l '</html>' "$src"/*.html | wc -l
}

compress_pages() {
	local f
	for f in "$src"/*.html; do
		gzip -9 -c "$f" >"$f.gz"
	done
}

write_manifest() {
	(cd "$src" && sha256sum -- *.html | sort -k2) >"$work/manifest.txt"
}

pack() {
	(cd "$work" && tar -czf release.tar.gz site manifest.txt)
}

deploy() {
	local dest
	dest=$work/releases/$(date +%Y%m%d%H%M%S)
	mkdir -p "$dest"
	tar -xzf "$work/release.tar.gz" -C "$dest"
	ln -sfn "$dest" "$work/current"
}

log "building in $work"
build_pages
pages=$(count_complete)
if [ "$pages" -ne 4 ]; then
	log "expected 4 complete pages, found $pages"
	exit 1
fi
compress_pages &
write_manifest
wait
pack
deploy
log "deployed $(wc -l <"$work/manifest.txt") pages, $(du -sk "$work/current/" | cut -f1) KiB"
