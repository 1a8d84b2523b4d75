package algorithms

import "fmt"

// nginx's shared memory zone as its slab allocator cuts it up
// (src/core/ngx_slab.c of nginx 1.31.4, commit 3f6f7824d4e2), on the
// platform nginx mostly runs on: 64-bit Linux with 4 KiB pages (pointers
// and ngx_uint_t of 8 bytes, POSIX semaphores). The figures below are the
// sizes of nginx's structs there, measured with gcc on replicas of them.
const (
	slabPage      = 4096 // ngx_pagesize
	slabPageShift = 12   // ngx_pagesize_shift
	slabMinShift  = 3    // ngx_init_zone_pool (src/core/ngx_cycle.c) sets min_shift = 3
	slabExact     = 6    // ngx_slab_exact_shift: 4096 / (8*sizeof(uintptr_t)) = 64 bytes
	slabMaxSize   = slabPage / 2
	// sizeof(ngx_slab_pool_t), sizeof(ngx_slab_page_t), sizeof(ngx_slab_stat_t)
	slabPoolHeader = 200
	slabPageHeader = 24
	slabStat       = 32
	slabClasses    = slabPageShift - slabMinShift // 9: 8, 16, ..., 2048 bytes

	// nginxNodeHeader is what ngx_http_limit_req_lookup allocates for a
	// node besides the key (ngx_http_limit_req_module.c, lines 488-490):
	// offsetof(ngx_rbtree_node_t, color) = 32 plus
	// offsetof(ngx_http_limit_req_node_t, data) = 48.
	nginxNodeHeader = 80
	// nginxShctx is sizeof(ngx_http_limit_req_shctx_t), the tree and queue
	// heads that ngx_http_limit_req_init_zone allocates first (line 736).
	nginxShctx = 80
	// nginxLogCtx is the " in limit_req zone \"NAME\"" string it allocates
	// next (lines 748-750): sizeof of the format's text (22 with its NUL)
	// plus the zone's name, taken as 3 bytes ("one", nginx's own example).
	nginxLogCtx = 22 + 3
	// NginxMinZone is the smallest zone limit_req_zone accepts, 8 pages
	// (ngx_http_limit_req_zone, lines 894-898).
	NginxMinZone = 8 * slabPage
	// NginxMaxZone bounds the zone ratesim takes (1 TiB): nginx takes up to
	// what a size_t holds, but no run needs more.
	NginxMaxZone = 1 << 40
	// nginxMaxKey is the longest key nginx limits (65535 bytes): a longer
	// one is logged and not limited at all (ngx_http_limit_req_handler,
	// lines 236-242).
	nginxMaxKey = 65535
)

// slabPages returns the pages of a zone of size bytes that ngx_slab_init
// (ngx_slab.c, lines 98-165) leaves for allocations: after the pool's
// header, one list head and one stat per size class and one page header
// per page, the pages start at the next page boundary, and as many as fit
// before the end are used. The zone's memory is page-aligned (mmap).
func slabPages(size int64) int64 {
	const header = slabPoolHeader + slabClasses*(slabPageHeader+slabStat)
	pages := (size - header) / (slabPage + slabPageHeader)
	start := (header + pages*slabPageHeader + slabPage - 1) / slabPage * slabPage
	if m := pages - (size-start)/slabPage; m > 0 {
		pages -= m
	}
	return pages
}

// slabClass returns the size class ngx_slab_alloc_locked serves size
// bytes from (ngx_slab.c, lines 208-216): the shift of the smallest power
// of two >= size, at least 8 bytes; for a size above half a page, the
// number of whole pages it takes instead, as a negative number.
func slabClass(size int64) int {
	if size > slabMaxSize {
		return -int((size + slabPage - 1) / slabPage)
	}
	shift := slabMinShift
	for int64(1)<<shift < size {
		shift++
	}
	return shift
}

// slabChunks is how many chunks of a class a page holds: BIG and EXACT
// pages keep their bitmap in the page's header, so every chunk is usable;
// a SMALL page (8, 16, 32 bytes) gives its first chunks to the bitmap
// (ngx_slab.c, lines 335-371).
func slabChunks(shift int) int32 {
	chunks := int32(slabPage >> shift)
	if shift < slabExact {
		n := int32((slabPage >> shift) / ((1 << shift) * 8))
		chunks -= max(n, 1)
	}
	return chunks
}

// slabPool is the allocator's accounting, as much of it as decides whether
// an allocation succeeds and which page a chunk comes from: the free pages,
// and for each size class its pages with free chunks, in nginx's list
// order. Which chunk of a page is taken does not matter (a page returns to
// the free pages when its last chunk is freed, whichever), nor which free
// page (they are alike for one-page allocations).
//
// One simplification: an allocation of several pages (a node for a key
// longer than 1968 bytes) takes them from the count of free pages, where
// nginx's first fit (ngx_slab_alloc_pages) needs them contiguous, so with a
// fragmented zone nginx can fail where this succeeds.
type slabPool struct {
	free  int64 // free pages (pool->pfree)
	pages []slabPageState
	spare []int32 // ids of pages returned to the free pages, for reuse
	heads [slabClasses]int32
}

// slabPageState is one page cut into chunks of one class.
type slabPageState struct {
	used, chunks int32
	shift        int8
	listed       bool  // in its class's list of pages with free chunks
	prev, next   int32 // in that list (-1 none)
}

func newSlabPool(size int64) *slabPool {
	s := &slabPool{free: slabPages(size)}
	for i := range s.heads {
		s.heads[i] = -1
	}
	return s
}

// alloc takes a chunk of class (slabClass) and returns its page, or
// pages <= -1 for a run of -pages whole pages; ok is false when the zone
// has no room (ngx_slab_alloc_locked returns NULL).
func (s *slabPool) alloc(class int) (page int32, ok bool) {
	if class < 0 {
		if s.free < int64(-class) {
			return 0, false
		}
		s.free += int64(class)
		return int32(class), true
	}
	slot := class - slabMinShift
	if h := s.heads[slot]; h >= 0 {
		// the first page of the class's list (lines 223-330)
		p := &s.pages[h]
		p.used++
		if p.used == p.chunks {
			s.unlist(h)
		}
		return h, true
	}
	if s.free == 0 {
		return 0, false
	}
	// a new page for the class (lines 332-404)
	s.free--
	var id int32
	if n := len(s.spare); n > 0 {
		id, s.spare = s.spare[n-1], s.spare[:n-1]
	} else {
		id = int32(len(s.pages))
		s.pages = append(s.pages, slabPageState{})
	}
	s.pages[id] = slabPageState{used: 1, chunks: slabChunks(class), shift: int8(class), prev: -1, next: -1}
	if s.pages[id].chunks > 1 {
		s.list(id)
	}
	return id, true
}

// release frees a chunk of page (or a run of pages, page <= -1), as
// ngx_slab_free_locked does (lines 460-674): a page that was full goes
// back to the head of its class's list, an empty one to the free pages.
func (s *slabPool) release(page int32) {
	if page < 0 {
		s.free -= int64(page)
		return
	}
	p := &s.pages[page]
	if !p.listed {
		s.list(page)
	}
	p.used--
	if p.used == 0 {
		s.unlist(page)
		s.free++
		s.spare = append(s.spare, page)
	}
}

func (s *slabPool) list(id int32) {
	p := &s.pages[id]
	slot := int(p.shift) - slabMinShift
	p.listed, p.prev, p.next = true, -1, s.heads[slot]
	if p.next >= 0 {
		s.pages[p.next].prev = id
	}
	s.heads[slot] = id
}

func (s *slabPool) unlist(id int32) {
	p := &s.pages[id]
	if p.prev >= 0 {
		s.pages[p.prev].next = p.next
	} else {
		s.heads[int(p.shift)-slabMinShift] = p.next
	}
	if p.next >= 0 {
		s.pages[p.next].prev = p.prev
	}
	p.listed, p.prev, p.next = false, -1, -1
}

// NginxZoneNodes returns how many nodes for keys of keyLen bytes a
// limit_req zone of size bytes holds when it holds nothing else: its pages
// (slabPages) less the two that its tree head and log string take at
// start, times the nodes a page holds, plus the nodes that fit beside the
// tree head when they share its size class. It returns an error for a
// size nginx refuses (below 32k) or ratesim does not take (above 1 TiB).
func NginxZoneNodes(size int64, keyLen int) (int64, error) {
	if err := checkZone(size); err != nil {
		return 0, err
	}
	z := newSlabPool(size)
	z.alloc(slabClass(nginxShctx))
	z.alloc(slabClass(nginxLogCtx))
	class := slabClass(int64(nginxNodeHeader + keyLen))
	var n int64
	if class < 0 {
		return z.free / int64(-class), nil
	}
	if h := z.heads[class-slabMinShift]; h >= 0 {
		n = int64(z.pages[h].chunks - z.pages[h].used)
	}
	return n + z.free*int64(slabChunks(class)), nil
}

func checkZone(size int64) error {
	if size < NginxMinZone || size > NginxMaxZone {
		return &ParamError{Field: "zone", Found: fmt.Sprint(size),
			Want: "want a zone from 32k (nginx's smallest, 8 pages) to 1048576m"}
	}
	return nil
}
