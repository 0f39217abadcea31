/* The compiled decoder: captures/decode.py's Decoder, compiled.
 *
 * It reads classic pcap (both byte orders, micro- and nanosecond timestamps) and pcapng
 * (sections of either byte order, interfaces of any link type and if_tsresol, enhanced, simple
 * and obsolete packet blocks; other blocks skipped), the link, IP and TCP layers, rebuilds each
 * direction of a connection (retransmitted octets delivered once, segments out of order held
 * until the hole fills, a hole that does not fill reported as a gap and reading resumed after
 * it, a header begun in short segments joined), frames DCE/RPC PDUs of either byte order,
 * tracks bind / alter_context and their acks (an ack captured before its bind kept for it),
 * reassembles calls sent in several fragments, pairs requests with their responses or faults,
 * and reads the trace validator's columns of the common calls in C (the parsers of
 * captures/fastpath.py, by the code fastpath.C_PARSERS gives each method). It makes the same
 * call rows, in the same order, and the same error rows (malformed frames, most often frames
 * cut by a snap length; gaps; desynchronised streams; malformed PDUs; fragments out of place;
 * records that cannot be framed), as decode.Decoder(json_fields=False).
 *
 * The Python side feeds it the file's octets (decompressed, for a gzipped file) and decodes
 * what it hands back: a call whose stub the C parsers decline (or a big-endian one) comes back
 * with its stubs (the ``declined`` list) for the Python codec; the messages that need Python's
 * words (a malformed bind, a malformed verification trailer, an endpoint as text) come from
 * callbacks. Where the two readings could part (a bind decode_pdu takes but it does not) it
 * raises Unsupported, and the caller decodes the whole file with decode.Decoder. tests/captures/test_cdecode.py holds the
 * rows equal to decode.Decoder's.
 *
 * Layouts: pcap (draft-ietf-opsawg-pcap), pcapng (draft-ietf-opsawg-pcapng), IPv4/IPv6/TCP
 * (RFC 791, 8200, 9293), the connection-oriented PDUs (C706 12.6; MS-RPCE 2.2.2.11 for the
 * auth trailer), the stubs (MS-MQRR 6 IDL; NDR and NDR64, see captures/fastpath.py's module
 * text).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdarg.h>
#include <math.h>
#include <string.h>

#include "_cdecode_gen.h" /* NCOLS, COL_*, PT_*, PFC_*, FAST_*: generated (captures/columns.py) */

#define MAX_RECORD (16u << 20)
#define MAX_ENDED 65536

static PyObject *Unsupported;

/* ------------------------------------------------------------------ little helpers */

static inline uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t le64(const uint8_t *p) { return le32(p) | (uint64_t)le32(p + 4) << 32; }
static inline uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void *grow(void *ptr, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return ptr;
    size_t c = *cap ? *cap : 8;
    while (c < need) c *= 2;
    void *p = PyMem_Realloc(ptr, c * size);
    if (!p) { PyErr_NoMemory(); return NULL; }
    *cap = c;
    return p;
}

static int unsupported(const char *why) {
    PyErr_SetString(Unsupported, why);
    return -1;
}

/* ------------------------------------------------------------------ connections */

typedef struct { uint8_t ip[16]; uint8_t len; uint16_t port; } Side;
typedef struct { Side a, b; } Key; /* a <= b as Python orders (bytes, port) tuples */

static int side_cmp(const Side *x, const Side *y) {
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->ip, y->ip, n);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->port < y->port ? -1 : x->port > y->port ? 1 : 0;
}
static int side_eq(const Side *x, const Side *y) { return side_cmp(x, y) == 0; }

typedef struct { int64_t end, frame; double ts; } Mark;

typedef struct {
    uint32_t seq;
    uint8_t *data; size_t len;
    int64_t frame; double ts;
} Held; /* a segment out of order, until the hole before it fills */

typedef struct {
    int exists, has_next, synced, has_fin, probing; /* probing: buf holds a header's pieces */
    uint32_t next_seq, fin;
    int64_t skipped, base;
    uint8_t *buf; size_t len, cap; /* while probing: the pieces of a header begun */
    Mark *marks; size_t nmarks, capmarks;
    Held *held; size_t nheld, capheld, held_size; /* in the order decode.py's dict keeps */
} Dir;

#define MAX_PENDING (4u << 20)

typedef struct { uint16_t ctx; uint8_t abstract[16]; uint16_t major, minor; } Proposed;
typedef struct { uint32_t call_id; size_t n; Proposed *items; } Bind;
typedef struct { uint16_t ctx; PyObject *info; } Context;
typedef struct { uint16_t result; uint8_t syntax[16]; } Result; /* syntax: as bytes_le */
/* a bind_ack or alter_context_resp captured before its bind (association._early_acks) */
typedef struct { uint32_t call_id; size_t n; Result *items; } EarlyAck;
#define MAX_EARLY_ACKS 64

typedef struct {
    uint32_t call_id;
    int is_fault; uint32_t fault;
    uint8_t *stub; size_t len;
    int64_t first, last; double ts;
    uint16_t ctx, opnum;
    int big; /* its drep says big-endian integers */
    int vt;  /* a request stub holding a verification trailer's signature */
    int sealed; /* sent at packet privacy: the stub is encrypted (association: sealed) */
} Msg;

/* a call's fragments so far (association._Partial), keyed by (group, call_id) */
typedef struct {
    int group; /* 0 request, 1 response */
    Msg m;     /* ctx, opnum, drep and the first fragment's frame and time; stub: joined */
    size_t cap;
} Partial;

typedef struct {
    int64_t index;
    Key key;
    Side client;
    int has_client_side; Side client_side;
    Dir dirs[2];
    int first_dir; /* the direction seen first (decode.py walks them in that order) */
    int64_t frames;
    int dcerpc, closed, has_group, has_syn;
    uint32_t assoc_group, syn_seq;
    Side syn_side;
    Context *contexts; size_t ncontexts, capcontexts;
    Bind *binds; size_t nbinds, capbinds;
    EarlyAck *early; size_t nearly, capearly;
    Msg *requests; size_t nrequests, caprequests;
    Msg *answers; size_t nanswers, capanswers;
    Partial *partial; size_t npartial, cappartial;
    PyObject *names; Side names_client;
} Conn;

typedef struct { Key key; int dcerpc, has_syn; Side syn_side; uint32_t syn_seq; } Ended;

/* open addressing, linear probing; ``used`` marks a slot in use */
typedef struct { Key key; void *value; int used; } Slot;
typedef struct { Slot *slots; size_t cap, n; } Table;

static uint64_t key_hash(const Key *k) {
    uint64_t h = 1469598103934665603ULL;
    const uint8_t *p = (const uint8_t *)k;
    for (size_t i = 0; i < sizeof(Key); i++) { h ^= p[i]; h *= 1099511628211ULL; }
    return h;
}

static Slot *table_find(Table *t, const Key *k) {
    if (!t->cap) return NULL;
    size_t i = key_hash(k) & (t->cap - 1);
    while (t->slots[i].used) {
        if (!memcmp(&t->slots[i].key, k, sizeof(Key))) return &t->slots[i];
        i = (i + 1) & (t->cap - 1);
    }
    return NULL;
}

static int table_put(Table *t, const Key *k, void *value);

static int table_rehash(Table *t, size_t cap) {
    Slot *old = t->slots;
    size_t oldcap = t->cap;
    t->slots = PyMem_Calloc(cap, sizeof(Slot));
    if (!t->slots) { t->slots = old; PyErr_NoMemory(); return -1; }
    t->cap = cap;
    t->n = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].used) table_put(t, &old[i].key, old[i].value);
    PyMem_Free(old);
    return 0;
}

static int table_put(Table *t, const Key *k, void *value) {
    if ((t->n + 1) * 2 > t->cap && table_rehash(t, t->cap ? t->cap * 2 : 64) < 0) return -1;
    size_t i = key_hash(k) & (t->cap - 1);
    while (t->slots[i].used) {
        if (!memcmp(&t->slots[i].key, k, sizeof(Key))) { t->slots[i].value = value; return 0; }
        i = (i + 1) & (t->cap - 1);
    }
    t->slots[i].key = *k;
    t->slots[i].value = value;
    t->slots[i].used = 1;
    t->n++;
    return 0;
}

static void table_del(Table *t, Slot *s) { /* backward-shift deletion */
    size_t i = (size_t)(s - t->slots), mask = t->cap - 1;
    size_t j = i;
    t->slots[i].used = 0;
    t->n--;
    for (;;) {
        j = (j + 1) & mask;
        if (!t->slots[j].used) return;
        size_t home = key_hash(&t->slots[j].key) & mask;
        /* move j back to i when home is not cyclically in (i, j] */
        if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
            t->slots[i] = t->slots[j];
            t->slots[j].used = 0;
            i = j;
        }
    }
}

/* ------------------------------------------------------------------ the scanner */

typedef struct { uint32_t linktype; double tick; uint64_t per; } Iface;
/* pcapng: seconds per tick, and ticks per second where that is a power of ten of at most
   10^19 (0 otherwise): whole seconds apart, as pcapio reads them */

typedef struct {
    PyObject_HEAD
    PyObject *name;        /* the capture's name (str) */
    PyObject *context_fn;  /* (abstract16|None, major, minor, syntax16|None) -> info tuple */
    PyObject *endpoint_fn; /* (cip, cport, sip, sport) -> (client, server, cip, sip) texts */
    PyObject *trailer_fn;  /* request stub -> what is wrong with its verification trailer|None */
    PyObject *problem_fn;  /* a bind or bind_ack PDU -> what decode_pdu says is wrong|None */
    PyObject *unknown;     /* the info of a context no bind accepted */
    PyObject *cols[NCOLS]; /* the call rows since the last take, column by column */
    Py_ssize_t nrows;
    PyObject *declined;    /* list of (row index, request stub, answer stub|None, big-endian) */
    PyObject *errors;      /* list of (rows made before it, frame|None, kind, message,
                            * connection|None): the error rows, in the order they happened */
    uint8_t *in; size_t inlen, incap; /* octets not yet framed */
    int64_t offset;        /* the file offset of in[0] */
    int format;            /* 0 not known yet, 1 classic pcap, 2 pcapng */
    int header_done, swapped, nano, failed, stopped; /* stopped: the file cannot be framed on */
    uint32_t linktype;
    Iface *ifaces; size_t nifaces, capifaces; /* pcapng: this section's interfaces */
    int64_t number;
    Table conns, ended;
    Ended *ended_items; size_t nended, ended_head; /* a ring, in the order first ended */
    int64_t count;
    /* the summary */
    int64_t frames, decoded, rejected, not_dcerpc, pdus, calls, bytes_read, gaps;
} Scanner;

static void dir_free(Dir *d) {
    PyMem_Free(d->buf);
    PyMem_Free(d->marks);
    for (size_t i = 0; i < d->nheld; i++) PyMem_Free(d->held[i].data);
    PyMem_Free(d->held);
    memset(d, 0, sizeof(*d));
}

static void conn_free(Conn *c) {
    for (int i = 0; i < 2; i++) dir_free(&c->dirs[i]);
    for (size_t i = 0; i < c->ncontexts; i++) Py_XDECREF(c->contexts[i].info);
    PyMem_Free(c->contexts);
    for (size_t i = 0; i < c->nbinds; i++) PyMem_Free(c->binds[i].items);
    PyMem_Free(c->binds);
    for (size_t i = 0; i < c->nearly; i++) PyMem_Free(c->early[i].items);
    PyMem_Free(c->early);
    for (size_t i = 0; i < c->nrequests; i++) PyMem_Free(c->requests[i].stub);
    PyMem_Free(c->requests);
    for (size_t i = 0; i < c->nanswers; i++) PyMem_Free(c->answers[i].stub);
    PyMem_Free(c->answers);
    for (size_t i = 0; i < c->npartial; i++) PyMem_Free(c->partial[i].m.stub);
    PyMem_Free(c->partial);
    Py_XDECREF(c->names);
    PyMem_Free(c);
}

/* --------------------------------------------------------------- the stub parsers (fastpath) */

/* the columns a call's stubs fill, by column index (captures/columns.py): a number, or a
 * context handle's 20 octets; only ``has`` needs clearing */
typedef struct {
    unsigned char has[NCOLS];
    unsigned char is_ctx[NCOLS];
    uint64_t value[NCOLS];
    uint8_t ctx[NCOLS][20];
} Fields;

static void fields_clear(Fields *f) { memset(f->has, 0, sizeof(f->has)); }

/* one column of a fast parser's row */
static void put_field(Fields *f, int column, const uint8_t *p, int kind, uint64_t v) {
    if (column < 0 || column >= NCOLS) return;
    f->has[column] = 1;
    f->is_ctx[column] = kind == FK_CTX;
    if (kind == FK_CTX) memcpy(f->ctx[column], p, 20);
    else f->value[column] = v;
}

/* a stub of a fixed layout (captures/_cdecode_gen.h FAST_PLANS, from wire/ndr.fixed_layout):
 * 1 and its columns filled, or 0 to decline (another size, a value out of its [range]) */
static int layout_parse(const FastLayout *l, const uint8_t *s, size_t n, Fields *f) {
    if (n != l->size) return 0;
    uint64_t values[FAST_MAX_FIELDS];
    for (unsigned i = 0; i < l->n; i++) {
        const FastField *x = &l->f[i];
        const uint8_t *p = s + x->offset;
        uint64_t v = 0;
        switch (x->kind) {
        case FK_U8: v = p[0]; break;
        case FK_U16: v = le16(p); break;
        case FK_U32: case FK_I32: v = le32(p); break;
        case FK_U64: v = le64(p); break;
        }
        if (x->ranged && (v < x->lo || v > x->hi)) return 0; /* the codec refuses it */
        values[i] = v;
    }
    for (unsigned i = 0; i < l->n; i++)
        put_field(f, l->f[i].column, s + l->f[i].offset, l->f[i].kind, values[i]);
    return 1;
}

/* request parsers: 1 on success, 0 to decline */
static int req_parse(int code, const uint8_t *s, size_t n, Fields *f) {
    if (code <= 0 || code >= (int)(sizeof(FAST_PLANS) / sizeof(FAST_PLANS[0]))) return 0;
    return layout_parse(&FAST_PLANS[code].request, s, n, f);
}

static int received_response(const uint8_t *s, size_t n, int ndr64, Fields *f) {
    if (n < 24) return 0;
    uint64_t sequence = le64(s + 8);
    uint32_t count = le32(s + 16);
    size_t pos;
    int present;
    if (ndr64) {
        if (n < 32) return 0;
        pos = 32;
        present = le64(s + 24) != 0;
    } else {
        pos = 24;
        present = le32(s + 20) != 0;
    }
    if (!present) {
        if (count) return 0;
    } else {
        uint64_t max_count, size;
        if (ndr64) {
            if (n < pos + 8) return 0;
            max_count = le64(s + pos); pos += 8; size = 24;
        } else {
            if (n < pos + 4) return 0;
            max_count = le32(s + pos); pos += 4; size = 16;
        }
        if (max_count != count || (uint64_t)count * size > n - pos) return 0;
        /* each SectionBuffer's length, or UINT64_MAX for a NULL pSectionBuffer */
        uint64_t *lengths = PyMem_Malloc((count ? count : 1) * sizeof(uint64_t));
        if (!lengths) return 0; /* declined: the codec decides */
        int ok = 0;
        for (uint32_t i = 0; i < count; i++) {
            uint32_t length;
            uint64_t pointer;
            if (ndr64) {
                pos += (8 - pos % 8) % 8;
                if (n < pos + 24) goto done;
                length = le32(s + pos + 8);
                pointer = le64(s + pos + 16);
                pos += 24;
            } else {
                pos += (4 - pos % 4) % 4;
                if (n < pos + 16) goto done;
                if (le16(s + pos) > 0x7FFF) goto done;
                length = le32(s + pos + 8);
                pointer = le32(s + pos + 12);
                pos += 16;
            }
            if (!pointer && length) goto done;
            lengths[i] = pointer ? length : UINT64_MAX;
        }
        for (uint32_t i = 0; i < count; i++) {
            if (lengths[i] == UINT64_MAX) continue;
            uint64_t length = lengths[i];
            if (ndr64) {
                pos += (8 - pos % 8) % 8;
                if (n < pos + 8 || le64(s + pos) != length) goto done;
                pos += 8;
            } else {
                pos += (4 - pos % 4) % 4;
                if (n < pos + 4 || le32(s + pos) != length) goto done;
                pos += 4;
            }
            if (n < pos + length) goto done;
            pos += length;
        }
        ok = 1;
    done:
        PyMem_Free(lengths);
        if (!ok) return 0;
    }
    pos += (4 - pos % 4) % 4;
    if (n != pos + 4) return 0;
    put_field(f, COL_STATUS, NULL, FK_U32, le32(s + pos));
    put_field(f, COL_SEQUENCE_ID, NULL, FK_U64, sequence);
    return 1;
}

static int resp_parse(int code, const uint8_t *s, size_t n, int ndr64, Fields *f) {
    if (code <= 0 || code >= (int)(sizeof(FAST_PLANS) / sizeof(FAST_PLANS[0]))) return 0;
    if (FAST_PLANS[code].variable) return received_response(s, n, ndr64, f);
    return layout_parse(&FAST_PLANS[code].response, s, n, f);
}

/* ------------------------------------------------------------------ call rows */

static PyObject *u64(uint64_t v) { return PyLong_FromUnsignedLongLong(v); }
static PyObject *i64(int64_t v) { return PyLong_FromLongLong(v); }

static PyObject *handle_text(const uint8_t *raw) {
    static const uint8_t zero[20];
    if (!memcmp(raw, zero, 20)) Py_RETURN_NONE;
    static const char hexd[] = "0123456789abcdef";
    char out[40];
    for (int i = 0; i < 20; i++) { out[2 * i] = hexd[raw[i] >> 4]; out[2 * i + 1] = hexd[raw[i] & 15]; }
    return PyUnicode_FromStringAndSize(out, 40);
}

static PyObject *side_bytes(const Side *s) {
    return PyBytes_FromStringAndSize((const char *)s->ip, s->len);
}

#define NONE() (Py_INCREF(Py_None), Py_None)

/* an error row (decode.DecodeError): ``message`` a new reference, or NULL when making it
 * failed; frame and connection -1 for none */
static int add_error(Scanner *sc, int64_t frame, const char *kind, PyObject *message,
                     int64_t conn) {
    if (!message) return -1;
    PyObject *fr = frame >= 0 ? PyLong_FromLongLong(frame) : NONE();
    PyObject *cn = conn >= 0 ? PyLong_FromLongLong(conn) : NONE();
    PyObject *t = NULL;
    if (fr && cn) t = Py_BuildValue("(nOsOO)", sc->nrows, fr, kind, message, cn);
    Py_XDECREF(fr);
    Py_XDECREF(cn);
    Py_DECREF(message);
    if (!t) return -1;
    int r = PyList_Append(sc->errors, t);
    Py_DECREF(t);
    return r;
}

/* decode._endpoint of one side, as text (a new reference) */
static PyObject *side_text(Scanner *sc, const Side *s) {
    PyObject *ip = side_bytes(s);
    if (!ip) return NULL;
    PyObject *names = PyObject_CallFunction(sc->endpoint_fn, "OiOi", ip, (int)s->port, ip,
                                            (int)s->port);
    Py_DECREF(ip);
    if (!names) return NULL;
    if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != 4) {
        Py_DECREF(names);
        PyErr_SetString(PyExc_TypeError, "endpoint names: a 4-tuple");
        return NULL;
    }
    PyObject *text = PyTuple_GET_ITEM(names, 0);
    Py_INCREF(text);
    Py_DECREF(names);
    return text;
}

/* an error row whose message names one side: ``format`` holds one %U, then ``a``, ``b`` */
static int side_error(Scanner *sc, int64_t frame, const char *kind, const Side *side,
                      int64_t conn, const char *format, ...) {
    PyObject *text = side_text(sc, side);
    if (!text) return -1;
    va_list va;
    va_start(va, format);
    PyObject *message = PyUnicode_FromFormatV(format, va);
    va_end(va);
    /* the side's text goes where the format says "{}" */
    PyObject *out = NULL;
    if (message) {
        PyObject *mark = PyUnicode_FromString("{}");
        if (mark) out = PyUnicode_Replace(message, mark, text, 1);
        Py_XDECREF(mark);
        Py_DECREF(message);
    }
    Py_DECREF(text);
    return add_error(sc, frame, kind, out, conn);
}

#define SET(i, v) do { PyObject *_v = (v); if (!_v) goto fail; PyTuple_SET_ITEM(row, (i), _v); } while (0)
#define OPT(has, expr) ((has) ? (expr) : NONE())

static Context *find_context(Conn *c, uint16_t ctx) {
    for (size_t i = 0; i < c->ncontexts; i++)
        if (c->contexts[i].ctx == ctx) return &c->contexts[i];
    return NULL;
}

/* _emit: one call row (req or ans may be NULL) */
static int emit(Scanner *sc, Conn *c, uint32_t call_id, Msg *req, Msg *ans) {
    Side client = c->has_client_side ? c->client_side : c->client;
    const Side *server = !side_eq(&c->key.a, &client) ? &c->key.a
                       : !side_eq(&c->key.b, &client) ? &c->key.b : &c->key.b;
    uint16_t ctx = req ? req->ctx : ans->ctx;
    Context *cx = find_context(c, ctx);
    PyObject *info = cx ? cx->info : sc->unknown;
    /* info: (name, ndr64, interface_text, version_text, syntax_text, methods) */
    PyObject *name = PyTuple_GET_ITEM(info, 0);
    int ndr64 = PyObject_IsTrue(PyTuple_GET_ITEM(info, 1));
    PyObject *methods = PyTuple_GET_ITEM(info, 5);
    PyObject *method = Py_None;
    int code = 0;
    if (name != Py_None && req && methods != Py_None) {
        PyObject *op = PyLong_FromLong(req->opnum);
        if (!op) return -1;
        PyObject *entry = PyDict_GetItemWithError(methods, op);
        Py_DECREF(op);
        if (!entry && PyErr_Occurred()) return -1;
        if (entry) {
            method = PyTuple_GET_ITEM(entry, 0);
            code = (int)PyLong_AsLong(PyTuple_GET_ITEM(entry, 1));
        }
    }
    int has_fault = ans && ans->is_fault;
    const char *error = NULL;
    PyObject *error_obj = NULL;
    if (!req) error = "no request for this answer in the capture";
    else if (!ans) error = "no answer to this request in the capture";
    int sealed = (req && req->sealed) || (ans && ans->sealed);
    if (sealed) error = SEALED_ERROR;
    Fields f;
    fields_clear(&f);
    int decline = 0;
    if (sealed) {
        /* decode.py SEALED: nothing decoded, no error row */
    } else if (name != Py_None && method != Py_None && PyTuple_GET_ITEM(info, 4) != Py_None) {
        /* fastpath.observe: the request, then the response unless a fault or none; a
         * big-endian stub goes to decode.py, which says it does not decode it */
        if (req->big || req->vt || !code || !req_parse(code, req->stub, req->len, &f))
            decline = 1; /* a trailer to cut off first: decode.py does, and decodes the rest */
        else if (ans && !has_fault && !resp_parse(code, ans->stub, ans->len, ndr64, &f))
            decline = 1;
        if (decline) fields_clear(&f);
    } else if (name != Py_None && req && method == Py_None) {
        error_obj = PyUnicode_FromFormat("%U has no method with opnum %u", name, (unsigned)req->opnum);
        if (!error_obj) return -1;
    }
    sc->calls++;
    if (!c->names || !side_eq(&c->names_client, &client)) {
        PyObject *cip = side_bytes(&client), *sip = side_bytes(server);
        PyObject *names = NULL;
        if (cip && sip)
            names = PyObject_CallFunction(sc->endpoint_fn, "OiOi", cip, (int)client.port, sip,
                                          (int)server->port);
        Py_XDECREF(cip);
        Py_XDECREF(sip);
        if (!names) { Py_XDECREF(error_obj); return -1; }
        if (!PyTuple_Check(names) || PyTuple_GET_SIZE(names) != 4) {
            Py_DECREF(names);
            Py_XDECREF(error_obj);
            PyErr_SetString(PyExc_TypeError, "endpoint names: a 4-tuple");
            return -1;
        }
        Py_XSETREF(c->names, names);
        c->names_client = client;
    }
    PyObject *row = PyTuple_New(NCOLS);
    if (!row) { Py_XDECREF(error_obj); return -1; }
    PyObject *n = c->names;
#define ITEM(t, i) (Py_INCREF(PyTuple_GET_ITEM(t, i)), PyTuple_GET_ITEM(t, i))
    SET(COL_CAPTURE, (Py_INCREF(sc->name), sc->name));
    SET(COL_CONNECTION, i64(c->index));
    SET(COL_CLIENT, ITEM(n, 0));
    SET(COL_SERVER, ITEM(n, 1));
    SET(COL_CLIENT_IP, ITEM(n, 2));
    SET(COL_CLIENT_PORT, PyLong_FromLong(client.port));
    SET(COL_SERVER_IP, ITEM(n, 3));
    SET(COL_SERVER_PORT, PyLong_FromLong(server->port));
    SET(COL_ASSOC_GROUP, OPT(c->has_group, u64(c->assoc_group)));
    SET(COL_CONTEXT_ID, PyLong_FromLong(ctx));
    SET(COL_INTERFACE, ITEM(info, 2));
    SET(COL_INTERFACE_VERSION, ITEM(info, 3));
    SET(COL_INTERFACE_NAME, ITEM(info, 0));
    SET(COL_TRANSFER_SYNTAX, ITEM(info, 4));
    SET(COL_CALL_ID, u64(call_id));
    SET(COL_OPNUM, OPT(req, PyLong_FromLong(req->opnum)));
    SET(COL_METHOD, (Py_INCREF(method), method));
    SET(COL_FAULT, OPT(has_fault, u64(ans->fault)));
    if (error_obj) { PyTuple_SET_ITEM(row, COL_DECODE_ERROR, error_obj); error_obj = NULL; }
    else SET(COL_DECODE_ERROR, error ? PyUnicode_FromString(error) : NONE());
    SET(COL_REQUEST_FIRST_FRAME, OPT(req, i64(req->first)));
    SET(COL_REQUEST_LAST_FRAME, OPT(req, i64(req->last)));
    SET(COL_RESPONSE_FIRST_FRAME, OPT(ans, i64(ans->first)));
    SET(COL_RESPONSE_LAST_FRAME, OPT(ans, i64(ans->last)));
    SET(COL_REQUEST_TIME, OPT(req, PyFloat_FromDouble(req->ts)));
    SET(COL_RESPONSE_TIME, OPT(ans, PyFloat_FromDouble(ans->ts)));
    /* the columns the stubs filled (status and the trace validator's) */
    for (int i = 0; i < NCOLS; i++)
        if (f.has[i] && !PyTuple_GET_ITEM(row, i))
            SET(i, f.is_ctx[i] ? handle_text(f.ctx[i]) : u64(f.value[i]));
    /* the columns nothing filled (queue, access, action_text, object_type, props, vts, and
     * any other): null, or the codec's for a declined row */
    for (int i = 0; i < NCOLS; i++)
        if (!PyTuple_GET_ITEM(row, i)) PyTuple_SET_ITEM(row, i, NONE());
    if (decline) {
        PyObject *rq = PyBytes_FromStringAndSize((const char *)req->stub, (Py_ssize_t)req->len);
        PyObject *an = (ans && !has_fault)
            ? PyBytes_FromStringAndSize((const char *)ans->stub, (Py_ssize_t)ans->len)
            : NONE();
        PyObject *entry = (rq && an) ? Py_BuildValue("(nOOO)", sc->nrows, rq, an,
                                                     req->big ? Py_True : Py_False)
                                     : NULL;
        Py_XDECREF(rq);
        Py_XDECREF(an);
        if (!entry) goto fail;
        int r = PyList_Append(sc->declined, entry);
        Py_DECREF(entry);
        if (r < 0) goto fail;
    }
    for (int i = 0; i < NCOLS; i++)
        if (PyList_Append(sc->cols[i], PyTuple_GET_ITEM(row, i)) < 0) {
            /* the columns are uneven now: the scanner cannot go on */
            sc->failed = 1;
            Py_DECREF(row);
            return -1;
        }
    sc->nrows++;
    Py_DECREF(row);
    return 0;
fail:
    Py_XDECREF(error_obj);
    Py_DECREF(row);
    return -1;
}

/* ------------------------------------------------------------------ connection life */

static int msg_take(Msg **arr, size_t *n, uint32_t call_id, Msg *out) {
    for (size_t i = 0; i < *n; i++) {
        if ((*arr)[i].call_id == call_id) {
            *out = (*arr)[i];
            memmove(&(*arr)[i], &(*arr)[i + 1], (*n - i - 1) * sizeof(Msg));
            (*n)--;
            return 1;
        }
    }
    return 0;
}

static int msg_put(Msg **arr, size_t *n, size_t *cap, Msg *m) {
    Msg *p = grow(*arr, cap, *n + 1, sizeof(Msg));
    if (!p) return -1;
    *arr = p;
    p[(*n)++] = *m;
    return 0;
}

static int drain(Scanner *sc, Conn *c, const Side *side, Dir *d);

/* decode.py _gap: the hole before the held segments will not fill: reported, the PDU it cuts
 * dropped, reading goes on from the first held segment. ``frame``: -1 for the held one's */
static int gap(Scanner *sc, Conn *c, const Side *side, Dir *d, int64_t frame) {
    size_t best = 0;
    for (size_t i = 1; i < d->nheld; i++)
        if ((uint32_t)(d->held[i].seq - d->next_seq) < (uint32_t)(d->held[best].seq - d->next_seq))
            best = i;
    uint32_t first = d->held[best].seq, missing = first - d->next_seq;
    long long where = (long long)d->held[best].frame;
    sc->gaps++;
    if (side_error(sc, frame >= 0 ? frame : where, "gap", side, c->index,
                   "%u octets from {} are missing before frame %lld (not in the capture)",
                   (unsigned)missing, where) < 0)
        return -1;
    if (d->synced && d->len
        && side_error(sc, where, "gap", side, c->index,
                      "a PDU of {} is cut by the gap: its %zu octets read are dropped",
                      d->len) < 0)
        return -1;
    if (!d->probing) { /* a header's pieces (decode.py's probe) are kept */
        d->len = 0;
        d->nmarks = 0;
    }
    d->synced = 0;
    d->next_seq = first;
    return drain(sc, c, side, d);
}

static int close_conn(Scanner *sc, Conn *c) {
    Slot *s = table_find(&sc->conns, &c->key);
    if (s && s->value == c) table_del(&sc->conns, s);
    /* decode.py remembers the 65,536 most recent ended connections: from then on, the one
     * first remembered is forgotten (a dict's first key), before this one is remembered */
    if (sc->nended >= MAX_ENDED) {
        Ended *old = &sc->ended_items[sc->ended_head];
        Slot *o = table_find(&sc->ended, &old->key);
        if (o) table_del(&sc->ended, o);
        sc->ended_head = (sc->ended_head + 1) % MAX_ENDED;
        sc->nended--;
    }
    Slot *e = table_find(&sc->ended, &c->key);
    Ended *rec;
    if (e) {
        rec = e->value; /* remembered again: in its place, as a dict keeps a key's */
    } else {
        rec = &sc->ended_items[(sc->ended_head + sc->nended++) % MAX_ENDED];
        rec->key = c->key;
        if (table_put(&sc->ended, &c->key, rec) < 0) { conn_free(c); return -1; }
    }
    rec->dcerpc = c->dcerpc;
    rec->has_syn = c->has_syn;
    rec->syn_side = c->syn_side;
    rec->syn_seq = c->syn_seq;
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) { /* in the order decode.py met them */
        int i = k == 0 ? c->first_dir : 1 - c->first_dir;
        Dir *d = &c->dirs[i];
        if (!d->exists) continue;
        const Side *side = i == 0 ? &c->key.a : &c->key.b;
        while (rc == 0 && d->nheld) rc = gap(sc, c, side, d, -1); /* each hole in turn */
        if (rc == 0 && d->synced && d->len)
            rc = add_error(sc, d->nmarks ? d->marks[d->nmarks - 1].frame : -1, "truncated",
                           PyUnicode_FromFormat("%zu octets of a PDU end the connection "
                                                "unfinished", d->len), c->index);
    }
    /* association.close: the fragmented calls never completed, then the calls unpaired */
    for (size_t i = 0; i < c->npartial && rc == 0; i++)
        rc = add_error(sc, c->partial[i].m.first, "fragment",
                       PyUnicode_FromFormat("call_id %u: the last fragment never came",
                                            (unsigned)c->partial[i].m.call_id), c->index);
    for (size_t i = 0; i < c->nrequests && rc == 0; i++)
        rc = emit(sc, c, c->requests[i].call_id, &c->requests[i], NULL);
    for (size_t i = 0; i < c->nanswers && rc == 0; i++)
        rc = emit(sc, c, c->answers[i].call_id, NULL, &c->answers[i]);
    if (c->dcerpc) sc->decoded += c->frames;
    else sc->not_dcerpc += c->frames;
    conn_free(c);
    return rc;
}

/* ------------------------------------------------------------------ PDUs */

static int known_ptype(unsigned t) {
    switch (t) {
    case PT_REQUEST: case PT_RESPONSE: case PT_FAULT: case PT_BIND: case PT_BIND_ACK:
    case PT_BIND_NAK: case PT_ALTER_CONTEXT: case PT_ALTER_CONTEXT_RESP: case PT_AUTH3:
    case PT_SHUTDOWN: case PT_CO_CANCEL: case PT_ORPHANED:
        return 1;
    }
    return 0;
}

static int valid_header(const uint8_t *p, size_t n) {
    if (n < 16) return 0;
    if (p[0] != 5 || p[1] > 1 || !known_ptype(p[2])) return 0;
    if (!(p[4] == 0x00 || p[4] == 0x01 || p[4] == 0x10 || p[4] == 0x11) || p[5] > 3 || p[6] || p[7])
        return 0;
    int le = p[4] & 0x10;
    unsigned frag = le ? le16(p + 8) : be16(p + 8);
    unsigned auth = le ? le16(p + 10) : be16(p + 10);
    return frag >= 16 && auth + 16 <= frag;
}

static int header_prefix(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n && i < 8; i++) {
        uint8_t b = p[i];
        int ok = i == 0 ? b == 5 : i == 1 ? b <= 1 : i == 2 ? known_ptype(b) : i == 3 ? 1
               : i == 4 ? (b == 0 || b == 1 || b == 0x10 || b == 0x11) : i == 5 ? b <= 3 : b == 0;
        if (!ok) return 0;
    }
    return 1;
}

/* integers in the byte order of the PDU's drep (C706 12.6.3.1) */
static inline uint16_t rd16(int le, const uint8_t *p) { return le ? le16(p) : be16(p); }
static inline uint32_t rd32o(int le, const uint8_t *p) { return le ? le32(p) : be32(p); }
static inline size_t frag_of(const uint8_t *p) { return rd16(p[4] & 0x10, p + 8); }

/* an NDR uuid_t as uuid.UUID(bytes_le=) takes it: a big-endian one's three integers turned */
static void uuid_le(int le, const uint8_t *p, uint8_t out[16]) {
    memcpy(out, p, 16);
    if (le) return;
    out[0] = p[3]; out[1] = p[2]; out[2] = p[1]; out[3] = p[0];
    out[4] = p[5]; out[5] = p[4]; out[6] = p[7]; out[7] = p[6];
}

static int put_in_force(Scanner *sc, Conn *c, size_t bi, const Result *results, size_t n);

/* a bind or its answer that decode_pdu refuses (the caller asks it what it says) */
#define MALFORMED (-2)

static int bind_pdu(Scanner *sc, Conn *c, const uint8_t *p, size_t end, uint32_t call_id) {
    /* decode_pdu's reading of a bind / alter_context body, up to ``end`` */
    int le = p[4] & 0x10;
    size_t pos = 16;
    if (pos + 8 + 4 > end) return MALFORMED;
    pos += 8;
    unsigned n = p[pos];
    pos += 4;
    Proposed *items = PyMem_Calloc(n ? n : 1, sizeof(Proposed));
    if (!items) { PyErr_NoMemory(); return -1; }
    for (unsigned i = 0; i < n; i++) {
        if (pos + 4 + 20 > end) { PyMem_Free(items); return MALFORMED; }
        items[i].ctx = rd16(le, p + pos);
        unsigned nts = p[pos + 2];
        pos += 4;
        uuid_le(le, p + pos, items[i].abstract);
        items[i].major = rd16(le, p + pos + 16);
        items[i].minor = rd16(le, p + pos + 18);
        pos += 20;
        if (pos + 20 * (size_t)nts > end) { PyMem_Free(items); return MALFORMED; }
        pos += 20 * (size_t)nts;
    }
    size_t bi = 0;
    while (bi < c->nbinds && c->binds[bi].call_id != call_id) bi++;
    if (bi < c->nbinds) {
        PyMem_Free(c->binds[bi].items);
    } else {
        Bind *b = grow(c->binds, &c->capbinds, c->nbinds + 1, sizeof(Bind));
        if (!b) { PyMem_Free(items); return -1; }
        c->binds = b;
        b[bi].call_id = call_id;
        c->nbinds++;
    }
    c->binds[bi].items = items;
    c->binds[bi].n = n;
    /* its answer was captured first (frames out of order, or the bind's frame cut) */
    for (size_t i = 0; i < c->nearly; i++)
        if (c->early[i].call_id == call_id) {
            EarlyAck early = c->early[i];
            memmove(&c->early[i], &c->early[i + 1], (c->nearly - i - 1) * sizeof(EarlyAck));
            c->nearly--;
            int rc = put_in_force(sc, c, bi, early.items, early.n);
            PyMem_Free(early.items);
            return rc;
        }
    return 0;
}

static void bind_drop(Conn *c, size_t i) {
    PyMem_Free(c->binds[i].items);
    memmove(&c->binds[i], &c->binds[i + 1], (c->nbinds - i - 1) * sizeof(Bind));
    c->nbinds--;
}

/* association._put_in_force: the contexts the results accept, in proposal order, in force;
 * the proposal (binds[bi]) is done with */
static int put_in_force(Scanner *sc, Conn *c, size_t bi, const Result *results, size_t n) {
    Bind *b = &c->binds[bi];
    for (size_t i = 0; i < n && i < b->n; i++) {
        if (results[i].result != 0) continue; /* ContResult.ACCEPTANCE */
        Proposed *pr = &b->items[i];
        PyObject *info = PyObject_CallFunction(sc->context_fn, "y#iiy#", (const char *)pr->abstract,
                                               (Py_ssize_t)16, (int)pr->major, (int)pr->minor,
                                               (const char *)results[i].syntax, (Py_ssize_t)16);
        if (!info) return -1;
        if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) != 6) {
            Py_DECREF(info);
            PyErr_SetString(PyExc_TypeError, "context info: a 6-tuple");
            return -1;
        }
        Context *cx = find_context(c, pr->ctx);
        if (cx) {
            Py_XSETREF(cx->info, info);
        } else {
            Context *arr = grow(c->contexts, &c->capcontexts, c->ncontexts + 1, sizeof(Context));
            if (!arr) { Py_DECREF(info); return -1; }
            c->contexts = arr;
            arr[c->ncontexts].ctx = pr->ctx;
            arr[c->ncontexts].info = info;
            c->ncontexts++;
        }
    }
    bind_drop(c, bi);
    return 0;
}

static int bind_ack_pdu(Scanner *sc, Conn *c, const uint8_t *p, size_t end, uint32_t call_id,
                        int is_bind) {
    int le = p[4] & 0x10;
    size_t pos = 16;
    if (pos + 10 > end) return MALFORMED;
    uint32_t group = rd32o(le, p + pos + 4);
    unsigned alen = rd16(le, p + pos + 8);
    pos += 10;
    if (pos + alen > end) return MALFORMED;
    pos += alen;
    size_t pad = (4 - pos % 4) % 4;
    if (pos + pad > end) return MALFORMED;
    pos += pad;
    if (pos + 4 > end) return MALFORMED;
    unsigned n = p[pos];
    pos += 4;
    if (pos + 24 * (size_t)n > end) return MALFORMED;
    if (is_bind || group) { c->has_group = 1; c->assoc_group = group; }
    Result *results = PyMem_Calloc(n ? n : 1, sizeof(Result));
    if (!results) { PyErr_NoMemory(); return -1; }
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *r = p + pos + 24 * (size_t)i;
        results[i].result = rd16(le, r);
        uuid_le(le, r + 4, results[i].syntax);
    }
    size_t bi = 0;
    while (bi < c->nbinds && c->binds[bi].call_id != call_id) bi++;
    if (bi < c->nbinds) {
        int rc = put_in_force(sc, c, bi, results, n);
        PyMem_Free(results);
        return rc;
    }
    /* before its bind: kept until the bind comes (the most recent 64) */
    for (size_t i = 0; i < c->nearly; i++)
        if (c->early[i].call_id == call_id) {
            PyMem_Free(c->early[i].items);
            c->early[i].items = results;
            c->early[i].n = n;
            return 0;
        }
    EarlyAck *arr = grow(c->early, &c->capearly, c->nearly + 1, sizeof(EarlyAck));
    if (!arr) { PyMem_Free(results); return -1; }
    c->early = arr;
    arr[c->nearly].call_id = call_id;
    arr[c->nearly].items = results;
    arr[c->nearly].n = n;
    c->nearly++;
    if (c->nearly > MAX_EARLY_ACKS) {
        PyMem_Free(arr[0].items);
        memmove(&arr[0], &arr[1], (c->nearly - 1) * sizeof(EarlyAck));
        c->nearly--;
    }
    return 0;
}

/* whether a stub holds a verification trailer's signature (MS-RPCE 2.2.2.13), anywhere:
 * without it dcerpc.find_verification_trailer finds none */
static int has_vt_signature(const uint8_t *p, size_t n) {
    static const uint8_t sig[8] = {0x8A, 0xE3, 0x13, 0x71, 0x02, 0xF4, 0x36, 0x71};
    const uint8_t *end = p + n;
    while (end - p >= 8) {
        const uint8_t *at = memchr(p, sig[0], (size_t)(end - p) - 7);
        if (!at) return 0;
        if (!memcmp(at, sig, 8)) return 1;
        p = at + 1;
    }
    return 0;
}

static void partial_drop(Conn *c, size_t i, int free_stub) {
    if (free_stub) PyMem_Free(c->partial[i].m.stub);
    memmove(&c->partial[i], &c->partial[i + 1], (c->npartial - i - 1) * sizeof(Partial));
    c->npartial--;
}

/* association._observe_fragment: 1 and the whole request or response in ``m`` (its stub
 * taken from ``stub``), 0 while more fragments are to come (or on a fragment error), -1 */
static int fragment(Scanner *sc, Conn *c, int group, int flags, Msg *m, const uint8_t *stub,
                    size_t len) {
    size_t i = 0;
    while (i < c->npartial && !(c->partial[i].group == group
                                && c->partial[i].m.call_id == m->call_id)) i++;
    Partial *part = i < c->npartial ? &c->partial[i] : NULL;
    if (flags & PFC_FIRST_FRAG) {
        if (part && add_error(sc, part->m.first, "fragment",
                              PyUnicode_FromFormat("call_id %u: a new first fragment before "
                                                   "the last one", (unsigned)m->call_id),
                              c->index) < 0)
            return -1;
        uint8_t *copy = PyMem_Malloc(len ? len : 1);
        if (!copy) { PyErr_NoMemory(); return -1; }
        memcpy(copy, stub, len);
        if (flags & PFC_LAST_FRAG) { /* whole in one PDU: the common case */
            if (part) partial_drop(c, i, 1);
            m->stub = copy;
            m->len = len;
            return 1;
        }
        if (!part) { /* a new call under reassembly, after the others */
            Partial *arr = grow(c->partial, &c->cappartial, c->npartial + 1, sizeof(Partial));
            if (!arr) { PyMem_Free(copy); return -1; }
            c->partial = arr;
            part = &arr[c->npartial++];
        } else {
            PyMem_Free(part->m.stub); /* the call started again: in its place */
        }
        part->group = group;
        part->m = *m;
        part->m.stub = copy;
        part->m.len = len;
        part->cap = len ? len : 1;
        return 0;
    }
    if (!part)
        return add_error(sc, m->first, "fragment",
                         PyUnicode_FromFormat("call_id %u: a fragment without its first",
                                              (unsigned)m->call_id), c->index);
    uint8_t *joined = grow(part->m.stub, &part->cap, part->m.len + len, 1);
    if (!joined) return -1;
    part->m.stub = joined;
    memcpy(joined + part->m.len, stub, len);
    part->m.len += len;
    part->m.sealed |= m->sealed;
    if (!(flags & PFC_LAST_FRAG)) return 0;
    int64_t last = m->last;
    *m = part->m; /* the first fragment's context, opnum, drep, frame and time */
    m->last = last;
    partial_drop(c, i, 0);
    return 1;
}

static int call_pdu(Scanner *sc, Conn *c, const uint8_t *p, size_t frag, int ptype, int flags,
                    uint32_t call_id, size_t body_end, int sealed, int64_t first, int64_t last,
                    double first_ts) {
    int le = p[4] & 0x10;
    if (frag < 24)
        return add_error(sc, first, "pdu",
                         PyUnicode_FromFormat("%s call_id %u is cut short",
                                              ptype == PT_REQUEST ? "request"
                                              : ptype == PT_RESPONSE ? "response" : "fault",
                                              (unsigned)call_id), c->index);
    Msg m;
    memset(&m, 0, sizeof(m));
    m.call_id = call_id;
    m.first = first;
    m.last = last;
    m.ts = first_ts;
    m.big = !le;
    m.ctx = rd16(le, p + 20);
    m.sealed = sealed;
    size_t stub_start = 24;
    if (ptype == PT_REQUEST) {
        m.opnum = rd16(le, p + 22);
        if (flags & PFC_OBJECT_UUID) stub_start = 40;
    }
    if (ptype == PT_FAULT) {
        /* one too short for its status answers as an empty response does (association.feed) */
        m.is_fault = frag >= 28;
        if (m.is_fault) m.fault = rd32o(le, p + 24);
    } else {
        size_t stop = body_end > stub_start ? body_end : stub_start;
        if (stop > frag) stop = frag;
        size_t start = stub_start < frag ? stub_start : frag;
        int r = fragment(sc, c, ptype == PT_REQUEST ? 0 : 1, flags, &m, p + start,
                         stop > start ? stop - start : 0);
        if (r <= 0) return r;
    }
    Msg other;
    int rc = 0;
    m.vt = ptype == PT_REQUEST && !m.sealed && m.len >= 12 && has_vt_signature(m.stub, m.len);
    if (m.vt) {
        /* association._request: a verification trailer that is there but malformed is
         * reported as the request completes */
        PyObject *stub = PyBytes_FromStringAndSize((const char *)m.stub, (Py_ssize_t)m.len);
        PyObject *problem = stub ? PyObject_CallOneArg(sc->trailer_fn, stub) : NULL;
        Py_XDECREF(stub);
        if (problem && problem != Py_None)
            rc = add_error(sc, m.first, "trailer",
                           PyUnicode_FromFormat("call_id %u: %S", (unsigned)call_id, problem),
                           c->index);
        Py_XDECREF(problem);
        if (!problem || rc < 0) { PyMem_Free(m.stub); return -1; }
    }
    if (ptype == PT_REQUEST) {
        if (msg_take(&c->requests, &c->nrequests, call_id, &other)) {
            rc = emit(sc, c, call_id, &other, NULL);
            PyMem_Free(other.stub);
            if (rc < 0) { PyMem_Free(m.stub); return rc; }
        }
        if (msg_take(&c->answers, &c->nanswers, call_id, &other)) {
            rc = emit(sc, c, call_id, &m, &other);
            PyMem_Free(other.stub);
            PyMem_Free(m.stub);
            return rc;
        }
        rc = msg_put(&c->requests, &c->nrequests, &c->caprequests, &m);
        if (rc < 0) PyMem_Free(m.stub);
        return rc;
    }
    /* _answer */
    if (msg_take(&c->requests, &c->nrequests, call_id, &other)) {
        rc = emit(sc, c, call_id, &other, &m);
        PyMem_Free(other.stub);
        PyMem_Free(m.stub);
        return rc;
    }
    if (msg_take(&c->answers, &c->nanswers, call_id, &other)) {
        rc = emit(sc, c, call_id, NULL, &other);
        PyMem_Free(other.stub);
        if (rc < 0) { PyMem_Free(m.stub); return rc; }
    }
    rc = msg_put(&c->answers, &c->nanswers, &c->capanswers, &m);
    if (rc < 0) PyMem_Free(m.stub);
    return rc;
}

/* association.feed on a bind or its answer decode_pdu refuses: an error row of what it says
 * (nothing proposed, nothing put in force) */
static int malformed(Scanner *sc, Conn *c, const uint8_t *p, size_t frag, int64_t first,
                     int ptype, uint32_t call_id) {
    PyObject *pdu = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)frag);
    PyObject *problem = pdu ? PyObject_CallOneArg(sc->problem_fn, pdu) : NULL;
    Py_XDECREF(pdu);
    if (!problem) return -1;
    if (problem == Py_None) { /* decode_pdu takes it: the two readings differ */
        Py_DECREF(problem);
        return unsupported("a bind read otherwise than decode_pdu reads it");
    }
    int is_bind = ptype == PT_BIND || ptype == PT_ALTER_CONTEXT;
    PyObject *message = PyUnicode_FromFormat("%s call_id %u: %S", is_bind ? "bind" : "bind_ack",
                                             (unsigned)call_id, problem);
    Py_DECREF(problem);
    return add_error(sc, first, "pdu", message, c->index);
}

static int pdu(Scanner *sc, Conn *c, const Side *side, const uint8_t *p, size_t frag,
               int64_t first, int64_t last, double first_ts) {
    sc->pdus++;
    c->dcerpc = 1;
    int le = p[4] & 0x10;
    int ptype = p[2], flags = p[3];
    unsigned auth = rd16(le, p + 10);
    uint32_t call_id = rd32o(le, p + 12);
    size_t body_end = frag;
    int sealed = 0;
    /* the side that sends a bind, or the first request, is the client (before all else) */
    if (ptype == PT_BIND || ptype == PT_ALTER_CONTEXT
        || (ptype == PT_REQUEST && !c->has_client_side)) {
        c->has_client_side = 1;
        c->client_side = *side;
    }
    if (auth) {
        if (frag < 16 + 8 + (size_t)auth)
            return add_error(sc, first, "pdu",
                             PyUnicode_FromFormat("call_id %u: auth_length %u does not fit",
                                                  (unsigned)call_id, auth), c->index);
        unsigned pad = p[frag - auth - 8 + 2];
        /* MS-RPCE 2.2.2.11: auth_level follows auth_type; 6, packet privacy, seals the stub */
        sealed = p[frag - auth - 8 + 1] == AUTHN_LEVEL_PKT_PRIVACY;
        long e = (long)frag - (long)auth - 8 - (long)pad;
        body_end = e > 0 ? (size_t)e : 0;
        if ((ptype == PT_BIND || ptype == PT_BIND_ACK || ptype == PT_ALTER_CONTEXT
             || ptype == PT_ALTER_CONTEXT_RESP) && e < 16)
            return malformed(sc, c, p, frag, first, ptype, call_id); /* padding does not fit */
    }
    switch (ptype) {
    case PT_REQUEST: case PT_RESPONSE: case PT_FAULT:
        return call_pdu(sc, c, p, frag, ptype, flags, call_id, body_end, sealed, first, last,
                        first_ts);
    case PT_BIND: case PT_ALTER_CONTEXT: {
        int r = bind_pdu(sc, c, p, body_end, call_id);
        return r == MALFORMED ? malformed(sc, c, p, frag, first, ptype, call_id) : r;
    }
    case PT_BIND_ACK: case PT_ALTER_CONTEXT_RESP: {
        int r = bind_ack_pdu(sc, c, p, body_end, call_id, ptype == PT_BIND_ACK);
        return r == MALFORMED ? malformed(sc, c, p, frag, first, ptype, call_id) : r;
    }
    case PT_BIND_NAK:
        for (size_t i = 0; i < c->nbinds; i++)
            if (c->binds[i].call_id == call_id) { bind_drop(c, i); break; }
        return 0;
    }
    return 0;
}

/* ------------------------------------------------------------------ TCP */

static void mark_at(Dir *d, int64_t offset, int64_t *frame, double *ts) {
    for (size_t i = 0; i < d->nmarks; i++)
        if (offset < d->marks[i].end) { *frame = d->marks[i].frame; *ts = d->marks[i].ts; return; }
    *frame = d->marks[d->nmarks - 1].frame;
    *ts = d->marks[d->nmarks - 1].ts;
}

static int pdus(Scanner *sc, Conn *c, const Side *side, Dir *d) {
    size_t pos = 0;
    while (d->len - pos >= 16) {
        if (!valid_header(d->buf + pos, d->len - pos)) {
            int64_t at;
            double ts;
            mark_at(d, d->base + (int64_t)pos, &at, &ts);
            d->synced = 0; /* the octets kept are dropped (base stays, as in decode.py) */
            d->len = 0;
            d->nmarks = 0;
            return side_error(sc, at, "desync", side, c->index,
                              "octets from {} do not begin a PDU where one should begin: the "
                              "rest of the segment is dropped");
        }
        size_t frag = frag_of(d->buf + pos);
        if (d->len - pos < frag) break;
        int64_t start = d->base + (int64_t)pos, first, last;
        double first_ts, last_ts;
        mark_at(d, start, &first, &first_ts);
        mark_at(d, start + (int64_t)frag - 1, &last, &last_ts);
        /* pdu() reads buf in place: nothing it calls changes this direction */
        if (pdu(sc, c, side, d->buf + pos, frag, first, last, first_ts) < 0) return -1;
        pos += frag;
    }
    if (pos) {
        memmove(d->buf, d->buf + pos, d->len - pos);
        d->len -= pos;
        d->base += (int64_t)pos;
        size_t i = 0;
        while (i < d->nmarks && d->marks[i].end <= d->base) i++;
        if (i) {
            memmove(d->marks, d->marks + i, (d->nmarks - i) * sizeof(Mark));
            d->nmarks -= i;
        }
    }
    return 0;
}

static int append(Dir *d, const uint8_t *payload, size_t size, int64_t frame, double ts) {
    uint8_t *b = grow(d->buf, &d->cap, d->len + size, 1);
    if (!b) return -1;
    d->buf = b;
    memcpy(d->buf + d->len, payload, size);
    d->len += size;
    Mark *m = grow(d->marks, &d->capmarks, d->nmarks + 1, sizeof(Mark));
    if (!m) return -1;
    d->marks = m;
    m[d->nmarks].end = d->base + (int64_t)d->len;
    m[d->nmarks].frame = frame;
    m[d->nmarks].ts = ts;
    d->nmarks++;
    return 0;
}

static int deliver(Scanner *sc, Conn *c, const Side *side, Dir *d, const uint8_t *payload,
                   size_t size, int64_t frame, double ts) {
    d->next_seq += (uint32_t)size;
    if (!d->synced) {
        int probed = 0;
        if (d->probing || (size < 16 && header_prefix(payload, size))) {
            /* a header begun in a short segment: its pieces wait in buf until 16 octets */
            d->probing = 1;
            if (append(d, payload, size, frame, ts) < 0) return -1;
            if (d->len < 16) return 0;
            d->probing = 0;
            if (!valid_header(d->buf, d->len)) {
                d->skipped += (int64_t)d->len;
                d->len = 0;
                d->nmarks = 0;
                return 0;
            }
            probed = 1;
        } else if (!valid_header(payload, size)) {
            d->skipped += (int64_t)size;
            return 0;
        }
        d->synced = 1;
        if (d->skipped && c->dcerpc
            && side_error(sc, frame, "desync", side, c->index,
                          "%lld octets from {} skipped before a PDU began",
                          (long long)d->skipped) < 0)
            return -1;
        d->skipped = 0;
        if (probed) return pdus(sc, c, side, d);
        d->len = 0;
        d->nmarks = 0;
    }
    if (!d->len) {
        size_t pos = 0;
        while (size - pos >= 16 && valid_header(payload + pos, size - pos)) {
            size_t frag = frag_of(payload + pos);
            if (size - pos < frag) break;
            if (pdu(sc, c, side, payload + pos, frag, frame, frame, ts) < 0) return -1;
            pos += frag;
        }
        d->base += (int64_t)pos;
        if (pos == size) return 0;
        payload += pos;
        size -= pos;
    }
    if (append(d, payload, size, frame, ts) < 0) return -1;
    return pdus(sc, c, side, d);
}

static inline int64_t rel_of(uint32_t seq, uint32_t next) { return (int64_t)(int32_t)(seq - next); }

/* _drain: held segments that the delivered octets have reached, first found first */
static int drain(Scanner *sc, Conn *c, const Side *side, Dir *d) {
    while (d->nheld) {
        size_t i = 0;
        while (i < d->nheld && rel_of(d->held[i].seq, d->next_seq) > 0) i++;
        if (i == d->nheld) return 0;
        Held h = d->held[i];
        memmove(&d->held[i], &d->held[i + 1], (d->nheld - i - 1) * sizeof(Held));
        d->nheld--;
        d->held_size -= h.len;
        int64_t rel = rel_of(h.seq, d->next_seq);
        int rc = 0;
        if (rel + (int64_t)h.len > 0)
            rc = deliver(sc, c, side, d, h.data + (-rel), h.len - (size_t)(-rel), h.frame, h.ts);
        PyMem_Free(h.data);
        if (rc < 0) return -1;
    }
    return 0;
}

static int segment(Scanner *sc, Conn *c, const Side *side, Dir *d, uint32_t seq, int flags,
                   const uint8_t *payload, size_t size, int64_t frame, double ts) {
    if (flags & 0x02) {
        d->next_seq = seq + 1;
        d->has_next = 1;
        seq = d->next_seq;
    }
    if (!size) return 0;
    if (!d->has_next) { d->next_seq = seq; d->has_next = 1; }
    int64_t rel = rel_of(seq, d->next_seq);
    if (rel < 0) {
        if (rel + (int64_t)size <= 0) return 0;
        payload += -rel;
        size -= (size_t)(-rel);
        rel = 0;
    }
    if (rel > 0) { /* out of order: held until the hole fills (the longest per seq) */
        size_t i = 0;
        while (i < d->nheld && d->held[i].seq != seq) i++;
        if (i == d->nheld || d->held[i].len < size) {
            uint8_t *copy = PyMem_Malloc(size);
            if (!copy) { PyErr_NoMemory(); return -1; }
            memcpy(copy, payload, size);
            if (i == d->nheld) {
                Held *h = grow(d->held, &d->capheld, d->nheld + 1, sizeof(Held));
                if (!h) { PyMem_Free(copy); return -1; }
                d->held = h;
                d->nheld++;
            } else {
                d->held_size -= d->held[i].len;
                PyMem_Free(d->held[i].data);
            }
            d->held[i].seq = seq;
            d->held[i].data = copy;
            d->held[i].len = size;
            d->held[i].frame = frame;
            d->held[i].ts = ts;
            d->held_size += size;
        }
        if (d->held_size > MAX_PENDING) return gap(sc, c, side, d, frame);
        return 0;
    }
    if (deliver(sc, c, side, d, payload, size, frame, ts) < 0) return -1;
    return drain(sc, c, side, d);
}

/* ------------------------------------------------------------------ frames */

typedef struct {
    Side src, dst;
    uint32_t seq;
    int flags;
    const uint8_t *payload;
    size_t size;
} Seg;

/* what is wrong with a malformed frame: decode.FrameError's kind and message */
typedef struct { const char *kind; char message[160]; } Bad;

#define BAD(k, ...) do { bad->kind = (k); snprintf(bad->message, sizeof(bad->message), __VA_ARGS__); \
                         return -1; } while (0)

/* tcp_segment: 1 TCP, 0 well formed but not TCP over IP, -1 malformed (``bad`` says why) */
static int tcp_segment(uint32_t linktype, const uint8_t *data, size_t n, Seg *out, Bad *bad) {
    unsigned ethertype;
    size_t pos;
    if (linktype == 1) {
        if (n < 14) BAD("link", "Ethernet frame of %zu bytes", n);
        ethertype = be16(data + 12);
        pos = 14;
        while (ethertype == 0x8100 || ethertype == 0x88A8 || ethertype == 0x9100) {
            if (n < pos + 4) BAD("link", "VLAN tag cut short");
            ethertype = be16(data + pos + 2);
            pos += 4;
        }
    } else if (linktype == 101 || linktype == 12 || linktype == 14 || linktype == 228
               || linktype == 229) {
        if (!n) BAD("link", "empty raw IP frame");
        unsigned v = data[0] >> 4;
        ethertype = v == 4 ? 0x0800 : v == 6 ? 0x86DD : 0;
        pos = 0;
    } else if (linktype == 113) {
        if (n < 16) BAD("link", "Linux cooked header cut short");
        ethertype = be16(data + 14);
        pos = 16;
    } else if (linktype == 276) {
        if (n < 20) BAD("link", "Linux cooked v2 header cut short");
        ethertype = be16(data);
        pos = 20;
    } else if (linktype == 0) {
        if (n < 4) BAD("link", "loopback header cut short");
        uint32_t family = le32(data);
        if (family > 0xFFFF) family = be32(data);
        ethertype = family == 2 ? 0x0800
                  : (family == 10 || family == 24 || family == 28 || family == 30) ? 0x86DD : 0;
        pos = 4;
    } else {
        return 0;
    }
    size_t tcp, end;
    memset(&out->src, 0, sizeof(Side));
    memset(&out->dst, 0, sizeof(Side));
    if (ethertype == 0x0800) {
        if (n < pos + 20) BAD("ip", "IPv4 header cut short");
        unsigned vihl = data[pos], ihl = (vihl & 0x0F) * 4;
        if (vihl >> 4 != 4 || ihl < 20) BAD("ip", "IPv4 version/IHL byte 0x%02X", vihl);
        unsigned total = be16(data + pos + 2);
        if (total < ihl || n < pos + total)
            BAD("ip", "IPv4 total length %u but %zu bytes captured", total, n - pos);
        if ((data[pos + 6] & 0x20) || (((data[pos + 6] & 0x1F) << 8) | data[pos + 7]))
            BAD("ip", "IPv4 fragment (IP fragments are not reassembled)");
        if (data[pos + 9] != 6) return 0;
        memcpy(out->src.ip, data + pos + 12, 4);
        memcpy(out->dst.ip, data + pos + 16, 4);
        out->src.len = out->dst.len = 4;
        tcp = pos + ihl;
        end = pos + total;
    } else if (ethertype == 0x86DD) {
        if (n < pos + 40) BAD("ip", "IPv6 header cut short");
        if (data[pos] >> 4 != 6) BAD("ip", "IPv6 version is not 6");
        unsigned plen = be16(data + pos + 4), nxt = data[pos + 6];
        memcpy(out->src.ip, data + pos + 8, 16);
        memcpy(out->dst.ip, data + pos + 24, 16);
        out->src.len = out->dst.len = 16;
        end = pos + 40 + plen;
        if (n < end) BAD("ip", "IPv6 payload length %u but %zu bytes captured", plen, n - pos - 40);
        tcp = pos + 40;
        for (;;) {
            int ext = nxt == 0 || nxt == 43 || nxt == 60 || nxt == 51 || nxt == 135 || nxt == 139
                      || nxt == 140;
            if (nxt == 44) BAD("ip", "IPv6 fragment (IP fragments are not reassembled)");
            if (!ext) break;
            if (tcp + 8 > end) BAD("ip", "IPv6 extension header cut short");
            size_t size = (data[tcp + 1] + (nxt == 51 ? 2u : 1u)) * (nxt == 51 ? 4u : 8u);
            nxt = data[tcp];
            tcp += size;
        }
        if (nxt != 6) return 0;
    } else {
        return 0;
    }
    if (tcp > end || end - tcp < 20) BAD("tcp", "TCP header cut short");
    out->src.port = be16(data + tcp);
    out->dst.port = be16(data + tcp + 2);
    out->seq = be32(data + tcp + 4);
    unsigned hlen = (data[tcp + 12] >> 4) * 4;
    out->flags = data[tcp + 13];
    if (hlen < 20 || tcp + hlen > end) BAD("tcp", "TCP data offset %u", hlen);
    out->payload = data + tcp + hlen;
    out->size = end - tcp - hlen;
    return 1;
}

static int frame(Scanner *sc, uint32_t linktype, const uint8_t *data, size_t n, int64_t number,
                 double ts) {
    Seg g;
    Bad bad;
    int r = tcp_segment(linktype, data, n, &g, &bad);
    if (r < 0) { /* malformed (a frame cut by the snap length, most often): an error row */
        sc->rejected++;
        return add_error(sc, number, bad.kind, PyUnicode_FromString(bad.message), -1);
    }
    if (r == 0) { sc->not_dcerpc++; return 0; }
    Key key;
    memset(&key, 0, sizeof(key));
    int a_first = side_cmp(&g.src, &g.dst) <= 0;
    key.a = a_first ? g.src : g.dst;
    key.b = a_first ? g.dst : g.src;
    int syn = g.flags & 0x02, ack = g.flags & 0x10;
    Slot *s = table_find(&sc->conns, &key);
    Conn *c = s ? s->value : NULL;
    if (!c) {
        Slot *e = table_find(&sc->ended, &key);
        if (e) {
            Ended *rec = e->value;
            if (!syn || (rec->has_syn && side_eq(&rec->syn_side, &g.src) && rec->syn_seq == g.seq)) {
                if (rec->dcerpc) sc->decoded++;
                else sc->not_dcerpc++;
                return 0;
            }
        }
    }
    if (!c || (syn && !ack && c->closed)) {
        if (c && close_conn(sc, c) < 0) return -1;
        c = PyMem_Calloc(1, sizeof(Conn));
        if (!c) { PyErr_NoMemory(); return -1; }
        c->index = sc->count++;
        c->key = key;
        c->client = g.src;
        if (table_put(&sc->conns, &key, c) < 0) { conn_free(c); return -1; }
    }
    c->frames++;
    if (syn && !ack) {
        c->client = g.src;
        c->has_syn = 1;
        c->syn_side = g.src;
        c->syn_seq = g.seq;
    }
    int which = side_eq(&c->key.a, &g.src) ? 0 : 1;
    Dir *d = &c->dirs[which];
    if (!d->exists) {
        if (!c->dirs[1 - which].exists) c->first_dir = which;
        d->exists = 1;
    }
    if (g.flags & 0x01) {
        d->fin = g.seq + (uint32_t)g.size + (syn ? 1u : 0u);
        d->has_fin = 1;
    }
    if (segment(sc, c, &g.src, d, g.seq, g.flags, g.payload, g.size, number, ts) < 0) return -1;
    if (g.flags & 0x04) return close_conn(sc, c);
    if ((g.flags & 0x01) || c->closed) {
        int done = 0;
        for (int i = 0; i < 2; i++) {
            Dir *x = &c->dirs[i];
            if (x->exists && x->has_fin && (!x->has_next || x->next_seq == x->fin) && !x->nheld)
                done++;
        }
        c->closed = done;
        if (done == 2) return close_conn(sc, c);
    }
    return 0;
}

/* ------------------------------------------------------------------ records */

/* pcapio.RecordError as decode.Decoder counts it: a frame when it names one */
static int record_error(Scanner *sc, int64_t number, const char *kind, PyObject *message) {
    if (number >= 0) { sc->frames++; sc->rejected++; }
    return add_error(sc, number, kind, message, -1);
}

/* the end of what can be framed: an error row, and the rest of the file is not read */
static int stop(Scanner *sc, int64_t number, const char *kind, PyObject *message) {
    sc->stopped = 1;
    return record_error(sc, number, kind, message);
}

static int packet(Scanner *sc, uint32_t linktype, const uint8_t *data, size_t caplen,
                  double ts) {
    sc->number++;
    sc->frames++;
    sc->bytes_read += (int64_t)caplen;
    return frame(sc, linktype, data, caplen, sc->number, ts);
}

static uint32_t rd32(Scanner *sc, const uint8_t *p) { return sc->swapped ? be32(p) : le32(p); }
static uint16_t rd16s(Scanner *sc, const uint8_t *p) { return sc->swapped ? be16(p) : le16(p); }

/* classic pcap (pcapio._pcap): the records whole in in[pos..], the offset of the first not */
static int pcap_records(Scanner *sc, size_t *at, int final) {
    size_t pos = *at;
    double scale = sc->nano ? 1e-9 : 1e-6;
    uint32_t limit = sc->nano ? 1000000000u : 1000000u;
    while (sc->inlen - pos >= 16) {
        const uint8_t *h = sc->in + pos;
        uint32_t sec = rd32(sc, h), frac = rd32(sc, h + 4), caplen = rd32(sc, h + 8);
        if (caplen > MAX_RECORD || frac >= limit) {
            *at = pos;
            return stop(sc, sc->number + 1, "corrupt", PyUnicode_FromFormat(
                "record header says %u bytes, fraction %u: not a record (the rest of the file "
                "cannot be framed)", (unsigned)caplen, (unsigned)frac));
        }
        if (sc->inlen - pos - 16 < caplen) break;
        if (packet(sc, sc->linktype, h + 16, caplen, (double)sec + (double)frac * scale) < 0) {
            *at = pos;
            return -1;
        }
        pos += 16 + (size_t)caplen;
    }
    *at = pos;
    size_t left = sc->inlen - pos;
    if (final && left >= 16)
        return stop(sc, sc->number + 1, "truncated", PyUnicode_FromFormat(
            "the record is cut short (%zu of %u bytes)", left - 16,
            (unsigned)rd32(sc, sc->in + pos + 8)));
    if (final && left)
        return stop(sc, sc->number + 1, "truncated", PyUnicode_FromFormat(
            "the record header is cut short (%zu of 16 bytes)", left));
    return 0;
}

/* if_tsresol (option 9) of an interface: seconds per tick and ticks per second
   (pcapio._tsresol) */
static double tsresol(Scanner *sc, const uint8_t *o, size_t n, uint64_t *per) {
    size_t pos = 0;
    while (pos + 4 <= n) {
        unsigned code = rd16s(sc, o + pos), size = rd16s(sc, o + pos + 2);
        if (code == 0) break;
        if (code == 9 && size >= 1 && pos + 4 < n) {
            unsigned v = o[pos + 4];
            *per = 0;
            if (!(v & 0x80) && v <= 19) {
                *per = 1;
                for (unsigned k = 0; k < v; k++) *per *= 10;
            }
            return v & 0x80 ? pow(2.0, -(double)(v & 0x7F)) : pow(10.0, -(double)v);
        }
        pos += 4 + size + (size_t)((4 - size % 4) % 4);
    }
    *per = 1000000;
    return 1e-6;
}

/* a pcapng timestamp in seconds: whole seconds apart where the resolution is decimal */
static double ng_time(const Iface *i, uint64_t ticks) {
    return i->per ? (double)(ticks / i->per) + (double)(ticks % i->per) * i->tick
                  : (double)ticks * i->tick;
}

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_BOM 0x1A2B3C4Du

/* pcapng (pcapio._pcapng): section headers, interfaces, enhanced, simple and obsolete packet
 * blocks; the others skipped */
static int pcapng_blocks(Scanner *sc, size_t *at, int final) {
    size_t pos = *at;
    int rc = 0;
    for (;;) {
        size_t left = sc->inlen - pos;
        long long off = (long long)(sc->offset + (int64_t)pos);
        if (left < 12) {
            if (final && left)
                rc = stop(sc, -1, "truncated", PyUnicode_FromString("a block header is cut short"));
            break;
        }
        const uint8_t *b = sc->in + pos;
        uint32_t type = rd32(sc, b);
        if (le32(b) == PCAPNG_SHB) {
            if (le32(b + 8) == PCAPNG_BOM) sc->swapped = 0;
            else if (be32(b + 8) == PCAPNG_BOM) sc->swapped = 1;
            else { rc = stop(sc, -1, "corrupt", PyUnicode_FromString(
                       "section header without the byte-order magic")); break; }
            type = PCAPNG_SHB;
            sc->nifaces = 0; /* a new section: new interfaces */
        }
        uint32_t length = rd32(sc, b + 4);
        if (length < 12 || length % 4 || length > MAX_RECORD) {
            rc = stop(sc, -1, "corrupt", PyUnicode_FromFormat(
                "block length %u at offset %lld: not a block", (unsigned)length, off));
            break;
        }
        int is_packet = type == 6 || type == 3 || type == 2;
        if (left < length) {
            if (final)
                rc = stop(sc, is_packet ? sc->number + 1 : -1, "truncated", PyUnicode_FromFormat(
                    "a block of %u bytes is cut short (%zu bytes)", (unsigned)length, left));
            break;
        }
        if (rd32(sc, b + length - 4) != length) {
            rc = stop(sc, -1, "corrupt", PyUnicode_FromFormat(
                "block at offset %lld: its two lengths differ", off));
            break;
        }
        const uint8_t *body = b + 8;
        if (type == 6 || type == 2) { /* enhanced (obsolete: a 16-bit interface, drops) */
            if (length < 32) {
                sc->number++;
                rc = record_error(sc, sc->number, "corrupt", PyUnicode_FromFormat(
                    "packet block of %u bytes: too short for its fields", (unsigned)length));
                if (rc < 0) break;
                pos += length;
                continue;
            }
            uint32_t iface = type == 6 ? rd32(sc, body) : rd16s(sc, body);
            uint32_t high = rd32(sc, body + 4), low = rd32(sc, body + 8);
            uint32_t caplen = rd32(sc, body + 12);
            if (iface >= sc->nifaces || 28 + (uint64_t)caplen > length - 4) {
                sc->number++;
                rc = type == 6
                    ? record_error(sc, sc->number, "corrupt", PyUnicode_FromFormat(
                          "packet block names interface %u of %zu or %u bytes of %u",
                          (unsigned)iface, sc->nifaces, (unsigned)caplen, (unsigned)length - 32))
                    : record_error(sc, sc->number, "corrupt",
                                   PyUnicode_FromString("packet block does not fit"));
            } else {
                Iface *i = &sc->ifaces[iface];
                rc = packet(sc, i->linktype, body + 20, caplen,
                            ng_time(i, (uint64_t)high << 32 | low));
            }
        } else if (type == 1) {
            if (length < 20) {
                rc = stop(sc, -1, "corrupt", PyUnicode_FromString("interface description too short"));
                break;
            }
            Iface *arr = grow(sc->ifaces, &sc->capifaces, sc->nifaces + 1, sizeof(Iface));
            if (!arr) { rc = -1; break; }
            sc->ifaces = arr;
            arr[sc->nifaces].linktype = rd16s(sc, body);
            arr[sc->nifaces].tick = tsresol(sc, body + 8, length - 20, &arr[sc->nifaces].per);
            sc->nifaces++;
        } else if (type == 3) { /* simple: no interface named, no time: interface 0's */
            if (!sc->nifaces || length < 16) {
                sc->number++;
                rc = record_error(sc, sc->number, "corrupt", PyUnicode_FromString(
                    "simple packet block without an interface"));
            } else {
                uint32_t orig = rd32(sc, body);
                size_t size = orig < length - 16 ? orig : length - 16;
                rc = packet(sc, sc->ifaces[0].linktype, body + 4, size, 0.0);
            }
        }
        if (rc < 0) break;
        pos += length;
    }
    *at = pos;
    return rc;
}

static int records(Scanner *sc, int final) {
    size_t pos = 0;
    int rc = 0;
    if (sc->stopped) {
        sc->inlen = 0;
        return 0;
    }
    if (!sc->format) {
        if (sc->inlen < 4) {
            if (final)
                return stop(sc, -1, "format", PyUnicode_FromFormat(
                    "%zu bytes: not a pcap or pcapng file", sc->inlen));
            return 0;
        }
        uint32_t magic = le32(sc->in);
        if (magic == PCAPNG_SHB) {
            sc->format = 2;
        } else if (magic == 0xA1B2C3D4 || magic == 0xA1B23C4D || be32(sc->in) == 0xA1B2C3D4
                   || be32(sc->in) == 0xA1B23C4D) {
            sc->format = 1;
        } else {
            char text[64];  /* PyUnicode_FromFormat has no %08X */
            snprintf(text, sizeof text, "magic 0x%08X: not a pcap or pcapng file",
                     (unsigned)magic);
            return stop(sc, -1, "format", PyUnicode_FromString(text));
        }
    }
    if (sc->format == 1) {
        if (!sc->header_done) {
            if (sc->inlen < 24) {
                if (final)
                    return stop(sc, -1, "truncated",
                                PyUnicode_FromString("the pcap file header is cut short"));
                return 0;
            }
            uint32_t magic = le32(sc->in);
            sc->swapped = !(magic == 0xA1B2C3D4 || magic == 0xA1B23C4D);
            sc->nano = (sc->swapped ? be32(sc->in) : magic) == 0xA1B23C4D;
            sc->linktype = rd32(sc, sc->in + 20) & 0x0FFFFFFF;
            sc->header_done = 1;
            pos = 24;
        }
        rc = pcap_records(sc, &pos, final);
    } else {
        rc = pcapng_blocks(sc, &pos, final);
    }
    if (sc->stopped) pos = sc->inlen;
    memmove(sc->in, sc->in + pos, sc->inlen - pos);
    sc->inlen -= pos;
    sc->offset += (int64_t)pos;
    return rc;
}

/* ------------------------------------------------------------------ the Python type */

static int new_columns(Scanner *sc) {
    for (int i = 0; i < NCOLS; i++) {
        PyObject *col = PyList_New(0);
        if (!col) return -1;
        Py_XSETREF(sc->cols[i], col);
    }
    sc->nrows = 0;
    return 0;
}

/* (the columns: a list of NCOLS lists, declined, errors) of the rows and error rows made since
 * the last take */
static PyObject *take_rows(Scanner *sc) {
    PyObject *cols = PyList_New(NCOLS);
    if (!cols) return NULL;
    for (int i = 0; i < NCOLS; i++) {
        Py_INCREF(sc->cols[i]);
        PyList_SET_ITEM(cols, i, sc->cols[i]);
    }
    PyObject *out = Py_BuildValue("(NOO)", cols, sc->declined, sc->errors);
    if (!out) return NULL;
    PyObject *declined = PyList_New(0), *errors = PyList_New(0);
    if (!declined || !errors || new_columns(sc) < 0) {
        Py_XDECREF(declined);
        Py_XDECREF(errors);
        Py_DECREF(out);
        return NULL;
    }
    Py_SETREF(sc->declined, declined);
    Py_SETREF(sc->errors, errors);
    return out;
}

static PyObject *Scanner_feed(Scanner *sc, PyObject *arg) {
    if (sc->failed) return PyErr_Format(Unsupported, "the scanner has failed");
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    uint8_t *in = grow(sc->in, &sc->incap, sc->inlen + (size_t)view.len, 1);
    if (!in) { PyBuffer_Release(&view); return NULL; }
    sc->in = in;
    memcpy(sc->in + sc->inlen, view.buf, (size_t)view.len);
    sc->inlen += (size_t)view.len;
    PyBuffer_Release(&view);
    if (records(sc, 0) < 0) { sc->failed = 1; return NULL; }
    return take_rows(sc);
}

/* the input ends here, damaged (a cut or corrupt gzip stream): pcapio.records stops with an
 * error row, unless the file's header was not whole yet (then it says that) */
static PyObject *Scanner_stop(Scanner *sc, PyObject *args) {
    const char *kind;
    PyObject *message;
    if (!PyArg_ParseTuple(args, "sU", &kind, &message)) return NULL;
    if (sc->failed) return PyErr_Format(Unsupported, "the scanner has failed");
    if (!sc->stopped) {
        int r;
        if ((!sc->format && sc->inlen) || (sc->format == 1 && !sc->header_done)) {
            r = records(sc, 1);
        } else {
            Py_INCREF(message);
            r = stop(sc, -1, kind, message);
        }
        if (r < 0) { sc->failed = 1; return NULL; }
    }
    return take_rows(sc);
}

static int by_index(const void *x, const void *y) {
    int64_t a = (*(Conn *const *)x)->index, b = (*(Conn *const *)y)->index;
    return a < b ? -1 : a > b;
}

static PyObject *Scanner_finish(Scanner *sc, PyObject *Py_UNUSED(ignored)) {
    if (sc->failed) return PyErr_Format(Unsupported, "the scanner has failed");
    if (records(sc, 1) < 0) { sc->failed = 1; return NULL; }
    /* the end of the capture ends every connection, in the order they began */
    size_t open = sc->conns.n, k = 0;
    Conn **order = PyMem_Calloc(open ? open : 1, sizeof(Conn *));
    if (!order) { sc->failed = 1; return PyErr_NoMemory(); }
    for (size_t i = 0; i < sc->conns.cap; i++)
        if (sc->conns.slots[i].used) order[k++] = sc->conns.slots[i].value;
    qsort(order, open, sizeof(Conn *), by_index);
    for (k = 0; k < open; k++)
        if (close_conn(sc, order[k]) < 0) {
            /* the ones not closed are still in the table: Scanner_dealloc frees them */
            PyMem_Free(order);
            sc->failed = 1;
            return NULL;
        }
    PyMem_Free(order);
    sc->failed = 1; /* done: no more input */
    PyObject *rows = take_rows(sc);
    if (!rows) return NULL;
    PyObject *summary = Py_BuildValue(
        "{sLsLsLsLsLsLsLsL}", "frames", (long long)sc->frames, "decoded", (long long)sc->decoded,
        "rejected", (long long)sc->rejected, "not_dcerpc", (long long)sc->not_dcerpc,
        "pdus", (long long)sc->pdus, "calls", (long long)sc->calls,
        "bytes_read", (long long)sc->bytes_read, "gaps", (long long)sc->gaps);
    if (!summary) { Py_DECREF(rows); return NULL; }
    PyObject *out = Py_BuildValue("(OO)", rows, summary);
    Py_DECREF(rows);
    Py_DECREF(summary);
    return out;
}

static int Scanner_init(Scanner *sc, PyObject *args, PyObject *kw) {
    static char *names[] = {"name", "context_fn", "endpoint_fn", "trailer_fn", "problem_fn",
                            NULL};
    PyObject *name, *context_fn, *endpoint_fn, *trailer_fn, *problem_fn;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "UOOOO", names, &name, &context_fn, &endpoint_fn,
                                     &trailer_fn, &problem_fn))
        return -1;
    PyObject *unknown = PyObject_CallFunction(context_fn, "OiiO", Py_None, 0, 0, Py_None);
    if (!unknown) return -1;
    if (!PyTuple_Check(unknown) || PyTuple_GET_SIZE(unknown) != 6) {
        Py_DECREF(unknown);
        PyErr_SetString(PyExc_TypeError, "context info: a 6-tuple");
        return -1;
    }
    Py_INCREF(name);
    Py_XSETREF(sc->name, name);
    Py_INCREF(context_fn);
    Py_XSETREF(sc->context_fn, context_fn);
    Py_INCREF(endpoint_fn);
    Py_XSETREF(sc->endpoint_fn, endpoint_fn);
    Py_INCREF(trailer_fn);
    Py_XSETREF(sc->trailer_fn, trailer_fn);
    Py_INCREF(problem_fn);
    Py_XSETREF(sc->problem_fn, problem_fn);
    Py_XSETREF(sc->unknown, unknown);
    Py_XSETREF(sc->declined, PyList_New(0));
    Py_XSETREF(sc->errors, PyList_New(0));
    if (!sc->declined || !sc->errors || new_columns(sc) < 0) return -1;
    sc->ended_items = PyMem_Calloc(MAX_ENDED, sizeof(Ended));
    if (!sc->ended_items) { PyErr_NoMemory(); return -1; }
    return 0;
}

static void Scanner_dealloc(Scanner *sc) {
    for (size_t i = 0; i < sc->conns.cap; i++)
        if (sc->conns.slots[i].used) conn_free(sc->conns.slots[i].value);
    PyMem_Free(sc->conns.slots);
    PyMem_Free(sc->ended.slots);
    PyMem_Free(sc->ended_items);
    PyMem_Free(sc->in);
    PyMem_Free(sc->ifaces);
    Py_XDECREF(sc->errors);
    Py_XDECREF(sc->name);
    Py_XDECREF(sc->context_fn);
    Py_XDECREF(sc->endpoint_fn);
    Py_XDECREF(sc->trailer_fn);
    Py_XDECREF(sc->problem_fn);
    Py_XDECREF(sc->unknown);
    for (int i = 0; i < NCOLS; i++) Py_XDECREF(sc->cols[i]);
    Py_XDECREF(sc->declined);
    Py_TYPE(sc)->tp_free((PyObject *)sc);
}

static PyMethodDef Scanner_methods[] = {
    {"feed", (PyCFunction)Scanner_feed, METH_O,
     "feed(octets) -> (columns, declined, errors): the call rows completed by these octets of "
     "the file, as one list per column, and the error rows"},
    {"stop", (PyCFunction)Scanner_stop, METH_VARARGS,
     "stop(kind, message) -> (columns, declined, errors): the input ends, damaged, here"},
    {"finish", (PyCFunction)Scanner_finish, METH_NOARGS,
     "finish() -> ((columns, declined, errors), summary): the end of the file"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "captures._cdecode.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Scanner(name, context_fn, endpoint_fn, trailer_fn, problem_fn): one pcap or "
              "pcapng file, fed in pieces",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Scanner_init,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_methods = Scanner_methods,
};

/* ------------------------------------------------------------------ stub parsers alone */

static PyObject *parse_stubs(PyObject *self, PyObject *args) {
    (void)self;
    int code, ndr64;
    Py_buffer rq;
    PyObject *resp;
    if (!PyArg_ParseTuple(args, "iy*pO", &code, &rq, &ndr64, &resp)) return NULL;
    Fields f;
    fields_clear(&f);
    int ok = req_parse(code, rq.buf, (size_t)rq.len, &f);
    PyBuffer_Release(&rq);
    if (ok && resp != Py_None) {
        Py_buffer rs;
        if (PyObject_GetBuffer(resp, &rs, PyBUF_SIMPLE) < 0) return NULL;
        ok = resp_parse(code, rs.buf, (size_t)rs.len, ndr64, &f);
        PyBuffer_Release(&rs);
    }
    if (!ok) Py_RETURN_NONE;
    PyObject *d = PyDict_New();
    if (!d) return NULL;
#define PUT(has, key, expr) do { if (has) { PyObject *_v = (expr); \
        if (!_v || PyDict_SetItemString(d, key, _v) < 0) { Py_XDECREF(_v); Py_DECREF(d); return NULL; } \
        Py_DECREF(_v); } } while (0)
    for (int i = 0; i < NCOLS; i++)
        if (i != COL_STATUS)
            PUT(f.has[i], COL_NAMES[i], f.is_ctx[i] ? handle_text(f.ctx[i]) : u64(f.value[i]));
    PyObject *status = f.has[COL_STATUS] ? u64(f.value[COL_STATUS]) : NONE();
    if (!status) { Py_DECREF(d); return NULL; }
    PyObject *out = Py_BuildValue("(NN)", status, d);
    return out;
}

static PyMethodDef module_methods[] = {
    {"parse_stubs", parse_stubs, METH_VARARGS,
     "parse_stubs(code, request, ndr64, response|None) -> (status, fields) or None: "
     "the C parser of one method alone (for the differential tests)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "captures._cdecode",
    "The compiled decoder of pcap and pcapng files (captures/decode.py's common path).", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cdecode(void) {
    if (PyType_Ready(&ScannerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Unsupported = PyErr_NewException("captures._cdecode.Unsupported", PyExc_ValueError, NULL);
    if (!Unsupported || PyModule_AddObjectRef(m, "Unsupported", Unsupported) < 0
        || PyModule_AddObjectRef(m, "Scanner", (PyObject *)&ScannerType) < 0
        || PyModule_AddStringConstant(m, "GENERATED", GENERATED) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
