/* The compiled decoder: captures/decode.py's Decoder for the captures that need no repair.
 *
 * It reads classic pcap (both byte orders, micro- and nanosecond timestamps), the link, IP and
 * TCP layers, rebuilds each direction of a connection (retransmitted octets delivered once,
 * segments out of order held until the hole fills, a header begun in short segments joined),
 * frames DCE/RPC PDUs, tracks bind / alter_context and their acks, pairs requests with their
 * responses or faults, and reads the trace validator's columns of the common calls in C (the
 * parsers of captures/fastpath.py, by the code fastpath.C_PARSERS gives each method). It makes
 * the same call rows, in the same order, as decode.Decoder(json_fields=False).
 *
 * What it does not do it does not guess: wherever the Python decoder would write an error row,
 * and wherever it would need what it does not have (pcapng, a gap, a PDU split over fragments,
 * big-endian NDR, a bind_ack before its bind, over 65,536 ended connections), it raises
 * Unsupported and the caller decodes the
 * whole file with decode.Decoder. A call whose stub the C parsers decline is handed back with
 * its stubs (the ``declined`` list) for the Python codec. tests/captures/test_cdecode.py holds
 * the rows equal to decode.Decoder's.
 *
 * Layouts: pcap (draft-ietf-opsawg-pcap), IPv4/IPv6/TCP (RFC 791, 8200, 9293), the
 * connection-oriented PDUs (C706 12.6; MS-RPCE 2.2.2.11 for the auth trailer), the stubs
 * (MS-MQRR 6 IDL; NDR and NDR64, see captures/fastpath.py's module text).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
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
    int exists, has_next, synced, has_fin, probing;
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

typedef struct {
    uint32_t call_id;
    int is_fault; uint32_t fault;
    uint8_t *stub; size_t len;
    int64_t first, last; double ts;
    uint16_t ctx, opnum;
} Msg;

typedef struct {
    int64_t index;
    Key key;
    Side client;
    int has_client_side; Side client_side;
    Dir dirs[2];
    int64_t frames;
    int dcerpc, closed, has_group, has_syn;
    uint32_t assoc_group, syn_seq;
    Side syn_side;
    Context *contexts; size_t ncontexts, capcontexts;
    Bind *binds; size_t nbinds, capbinds;
    Msg *requests; size_t nrequests, caprequests;
    Msg *answers; size_t nanswers, capanswers;
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

typedef struct {
    PyObject_HEAD
    PyObject *name;        /* the capture's name (str) */
    PyObject *context_fn;  /* (abstract16|None, major, minor, syntax16|None) -> info tuple */
    PyObject *endpoint_fn; /* (cip, cport, sip, sport) -> (client, server, cip, sip) texts */
    PyObject *unknown;     /* the info of a context no bind accepted */
    PyObject *cols[NCOLS]; /* the call rows since the last take, column by column */
    Py_ssize_t nrows;
    PyObject *declined;    /* list of (row index, request stub, answer stub|None) */
    uint8_t *in; size_t inlen, incap; /* octets not yet framed */
    int header_done, swapped, nano, failed;
    uint32_t linktype;
    int64_t number;
    Table conns, ended;
    Ended *ended_items; size_t nended;
    int64_t count;
    /* the summary */
    int64_t frames, decoded, not_dcerpc, pdus, calls, bytes_read;
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
    for (size_t i = 0; i < c->nrequests; i++) PyMem_Free(c->requests[i].stub);
    PyMem_Free(c->requests);
    for (size_t i = 0; i < c->nanswers; i++) PyMem_Free(c->answers[i].stub);
    PyMem_Free(c->answers);
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

#define SET(i, v) do { PyObject *_v = (v); if (!_v) goto fail; PyTuple_SET_ITEM(row, (i), _v); } while (0)
#define NONE() (Py_INCREF(Py_None), Py_None)
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
    Fields f;
    fields_clear(&f);
    int decline = 0;
    if (name != Py_None && method != Py_None && PyTuple_GET_ITEM(info, 4) != Py_None) {
        /* fastpath.observe: the request, then the response unless a fault or none */
        if (!code || !req_parse(code, req->stub, req->len, &f)) decline = 1;
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
        PyObject *entry = (rq && an) ? Py_BuildValue("(nOO)", sc->nrows, rq, an)
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

static int close_conn(Scanner *sc, Conn *c) {
    Slot *s = table_find(&sc->conns, &c->key);
    if (s && s->value == c) table_del(&sc->conns, s);
    /* decode.py forgets its oldest ended connection from the 65,536th on: not done here */
    if (sc->nended >= MAX_ENDED) { conn_free(c); return unsupported("over 65536 ended connections"); }
    Slot *e = table_find(&sc->ended, &c->key);
    Ended *rec;
    if (e) {
        rec = e->value;
    } else {
        rec = &sc->ended_items[sc->nended++];
        rec->key = c->key;
        if (table_put(&sc->ended, &c->key, rec) < 0) { conn_free(c); return -1; }
    }
    rec->dcerpc = c->dcerpc;
    rec->has_syn = c->has_syn;
    rec->syn_side = c->syn_side;
    rec->syn_seq = c->syn_seq;
    for (int i = 0; i < 2; i++)
        if (c->dirs[i].exists && (c->dirs[i].nheld || (c->dirs[i].synced && c->dirs[i].len))) {
            conn_free(c);
            return unsupported("a gap or a PDU left unfinished at the connection's end");
        }
    int rc = 0;
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

static int bind_pdu(Conn *c, const uint8_t *p, size_t end, uint32_t call_id) {
    /* decode_pdu's reading of a bind / alter_context body, up to ``end`` */
    size_t pos = 16;
    if (pos + 8 + 4 > end) return unsupported("bind cut short");
    pos += 8;
    unsigned n = p[pos];
    pos += 4;
    Proposed *items = PyMem_Calloc(n ? n : 1, sizeof(Proposed));
    if (!items) { PyErr_NoMemory(); return -1; }
    for (unsigned i = 0; i < n; i++) {
        if (pos + 4 + 20 > end) { PyMem_Free(items); return unsupported("bind cut short"); }
        items[i].ctx = le16(p + pos);
        unsigned nts = p[pos + 2];
        pos += 4;
        memcpy(items[i].abstract, p + pos, 16);
        items[i].major = le16(p + pos + 16);
        items[i].minor = le16(p + pos + 18);
        pos += 20;
        if (pos + 20 * (size_t)nts > end) { PyMem_Free(items); return unsupported("bind cut short"); }
        pos += 20 * (size_t)nts;
    }
    for (size_t i = 0; i < c->nbinds; i++)
        if (c->binds[i].call_id == call_id) {
            PyMem_Free(c->binds[i].items);
            c->binds[i].items = items;
            c->binds[i].n = n;
            return 0;
        }
    Bind *b = grow(c->binds, &c->capbinds, c->nbinds + 1, sizeof(Bind));
    if (!b) { PyMem_Free(items); return -1; }
    c->binds = b;
    b[c->nbinds].call_id = call_id;
    b[c->nbinds].items = items;
    b[c->nbinds].n = n;
    c->nbinds++;
    return 0;
}

static void bind_drop(Conn *c, size_t i) {
    PyMem_Free(c->binds[i].items);
    memmove(&c->binds[i], &c->binds[i + 1], (c->nbinds - i - 1) * sizeof(Bind));
    c->nbinds--;
}

static int bind_ack_pdu(Scanner *sc, Conn *c, const uint8_t *p, size_t end, uint32_t call_id,
                        int is_bind) {
    size_t pos = 16;
    if (pos + 10 > end) return unsupported("bind_ack cut short");
    uint32_t group = le32(p + pos + 4);
    unsigned alen = le16(p + pos + 8);
    pos += 10;
    if (pos + alen > end) return unsupported("bind_ack cut short");
    pos += alen;
    size_t pad = (4 - pos % 4) % 4;
    if (pos + pad > end) return unsupported("bind_ack cut short");
    pos += pad;
    if (pos + 4 > end) return unsupported("bind_ack cut short");
    unsigned n = p[pos];
    pos += 4;
    if (pos + 24 * (size_t)n > end) return unsupported("bind_ack cut short");
    if (is_bind || group) { c->has_group = 1; c->assoc_group = group; }
    size_t bi = 0;
    while (bi < c->nbinds && c->binds[bi].call_id != call_id) bi++;
    if (bi == c->nbinds) return unsupported("a bind_ack before its bind");
    Bind *b = &c->binds[bi];
    for (unsigned i = 0; i < n && i < b->n; i++) {
        const uint8_t *r = p + pos + 24 * (size_t)i;
        if (le16(r) != 0) continue; /* ContResult.ACCEPTANCE */
        Proposed *pr = &b->items[i];
        PyObject *info = PyObject_CallFunction(sc->context_fn, "y#iiy#", (const char *)pr->abstract,
                                               (Py_ssize_t)16, (int)pr->major, (int)pr->minor,
                                               (const char *)(r + 4), (Py_ssize_t)16);
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

static int call_pdu(Scanner *sc, Conn *c, const uint8_t *p, size_t frag, int ptype, int flags,
                    uint32_t call_id, size_t body_end, int64_t first, int64_t last, double first_ts) {
    if (frag < 24) return unsupported("a call PDU cut short");
    Msg m;
    memset(&m, 0, sizeof(m));
    m.call_id = call_id;
    m.first = first;
    m.last = last;
    m.ts = first_ts;
    size_t stub_start = 24;
    if (ptype == PT_REQUEST) {
        m.ctx = le16(p + 20);
        m.opnum = le16(p + 22);
        if (flags & PFC_OBJECT_UUID) stub_start = 40;
    } else {
        m.ctx = le16(p + 20);
    }
    if (ptype == PT_FAULT) {
        if (frag < 28) return unsupported("a fault PDU without its status");
        m.is_fault = 1;
        m.fault = le32(p + 24);
    } else {
        if ((flags & (PFC_FIRST_FRAG | PFC_LAST_FRAG)) != (PFC_FIRST_FRAG | PFC_LAST_FRAG))
            return unsupported("a call in fragments");
        size_t stop = body_end > stub_start ? body_end : stub_start;
        if (stop > frag) stop = frag;
        m.len = stop > stub_start ? stop - stub_start : 0;
        m.stub = PyMem_Malloc(m.len ? m.len : 1);
        if (!m.stub) { PyErr_NoMemory(); return -1; }
        memcpy(m.stub, p + stub_start, m.len);
    }
    Msg other;
    int rc = 0;
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

static int pdu(Scanner *sc, Conn *c, const Side *side, const uint8_t *p, size_t frag,
               int64_t first, int64_t last, double first_ts) {
    sc->pdus++;
    c->dcerpc = 1;
    if (!(p[4] & 0x10)) return unsupported("big-endian PDU");
    int ptype = p[2], flags = p[3];
    unsigned auth = le16(p + 10);
    uint32_t call_id = le32(p + 12);
    size_t body_end = frag;
    if (auth) {
        if (frag < 16 + 8 + (size_t)auth) return unsupported("auth_length does not fit");
        unsigned pad = p[frag - auth - 8 + 2];
        long e = (long)frag - (long)auth - 8 - (long)pad;
        body_end = e > 0 ? (size_t)e : 0;
        if ((ptype == PT_BIND || ptype == PT_BIND_ACK || ptype == PT_ALTER_CONTEXT
             || ptype == PT_ALTER_CONTEXT_RESP) && e < 16)
            return unsupported("auth padding does not fit"); /* decode_pdu refuses it */
    }
    switch (ptype) {
    case PT_REQUEST: case PT_RESPONSE: case PT_FAULT:
        if (ptype == PT_REQUEST && !c->has_client_side) { c->has_client_side = 1; c->client_side = *side; }
        return call_pdu(sc, c, p, frag, ptype, flags, call_id, body_end, first, last, first_ts);
    case PT_BIND: case PT_ALTER_CONTEXT:
        c->has_client_side = 1;
        c->client_side = *side;
        return bind_pdu(c, p, body_end, call_id);
    case PT_BIND_ACK: case PT_ALTER_CONTEXT_RESP:
        return bind_ack_pdu(sc, c, p, body_end, call_id, ptype == PT_BIND_ACK);
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
        if (!valid_header(d->buf + pos, d->len - pos)) return unsupported("desync");
        size_t frag = le16(d->buf + pos + 8); /* little-endian: big-endian ones are refused */
        if (!(d->buf[pos + 4] & 0x10)) return unsupported("big-endian PDU");
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
        if (d->skipped && c->dcerpc) return unsupported("octets skipped before a PDU began");
        d->skipped = 0;
        if (probed) return pdus(sc, c, side, d);
        d->len = 0;
        d->nmarks = 0;
    }
    if (!d->len) {
        size_t pos = 0;
        while (size - pos >= 16 && valid_header(payload + pos, size - pos)) {
            if (!(payload[pos + 4] & 0x10)) return unsupported("big-endian PDU");
            size_t frag = le16(payload + pos + 8);
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
        if (d->held_size > MAX_PENDING) return unsupported("a gap");
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

/* tcp_segment: 1 TCP, 0 well formed but not TCP over IP, -1 malformed (Unsupported) */
static int tcp_segment(uint32_t linktype, const uint8_t *data, size_t n, Seg *out) {
    unsigned ethertype;
    size_t pos;
    if (linktype == 1) {
        if (n < 14) return unsupported("link");
        ethertype = be16(data + 12);
        pos = 14;
        while (ethertype == 0x8100 || ethertype == 0x88A8 || ethertype == 0x9100) {
            if (n < pos + 4) return unsupported("link");
            ethertype = be16(data + pos + 2);
            pos += 4;
        }
    } else if (linktype == 101 || linktype == 12 || linktype == 14 || linktype == 228
               || linktype == 229) {
        if (!n) return unsupported("link");
        unsigned v = data[0] >> 4;
        ethertype = v == 4 ? 0x0800 : v == 6 ? 0x86DD : 0;
        pos = 0;
    } else if (linktype == 113) {
        if (n < 16) return unsupported("link");
        ethertype = be16(data + 14);
        pos = 16;
    } else if (linktype == 276) {
        if (n < 20) return unsupported("link");
        ethertype = be16(data);
        pos = 20;
    } else if (linktype == 0) {
        if (n < 4) return unsupported("link");
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
        if (n < pos + 20) return unsupported("ip");
        unsigned vihl = data[pos], ihl = (vihl & 0x0F) * 4;
        if (vihl >> 4 != 4 || ihl < 20) return unsupported("ip");
        unsigned total = be16(data + pos + 2);
        if (total < ihl || n < pos + total) return unsupported("ip");
        if ((data[pos + 6] & 0x20) || (((data[pos + 6] & 0x1F) << 8) | data[pos + 7]))
            return unsupported("ip");
        if (data[pos + 9] != 6) return 0;
        memcpy(out->src.ip, data + pos + 12, 4);
        memcpy(out->dst.ip, data + pos + 16, 4);
        out->src.len = out->dst.len = 4;
        tcp = pos + ihl;
        end = pos + total;
    } else if (ethertype == 0x86DD) {
        if (n < pos + 40) return unsupported("ip");
        if (data[pos] >> 4 != 6) return unsupported("ip");
        unsigned plen = be16(data + pos + 4), nxt = data[pos + 6];
        memcpy(out->src.ip, data + pos + 8, 16);
        memcpy(out->dst.ip, data + pos + 24, 16);
        out->src.len = out->dst.len = 16;
        end = pos + 40 + plen;
        if (n < end) return unsupported("ip");
        tcp = pos + 40;
        for (;;) {
            int ext = nxt == 0 || nxt == 43 || nxt == 60 || nxt == 51 || nxt == 135 || nxt == 139
                      || nxt == 140;
            if (nxt == 44) return unsupported("ip");
            if (!ext) break;
            if (tcp + 8 > end) return unsupported("ip");
            size_t size = (data[tcp + 1] + (nxt == 51 ? 2u : 1u)) * (nxt == 51 ? 4u : 8u);
            nxt = data[tcp];
            tcp += size;
        }
        if (nxt != 6) return 0;
    } else {
        return 0;
    }
    if (tcp > end || end - tcp < 20) return unsupported("tcp");
    out->src.port = be16(data + tcp);
    out->dst.port = be16(data + tcp + 2);
    out->seq = be32(data + tcp + 4);
    unsigned hlen = (data[tcp + 12] >> 4) * 4;
    out->flags = data[tcp + 13];
    if (hlen < 20 || tcp + hlen > end) return unsupported("tcp");
    out->payload = data + tcp + hlen;
    out->size = end - tcp - hlen;
    return 1;
}

static int frame(Scanner *sc, const uint8_t *data, size_t n, int64_t number, double ts) {
    Seg g;
    int r = tcp_segment(sc->linktype, data, n, &g);
    if (r < 0) return -1;
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
    Dir *d = &c->dirs[side_eq(&c->key.a, &g.src) ? 0 : 1];
    d->exists = 1;
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

static uint32_t rd32(Scanner *sc, const uint8_t *p) { return sc->swapped ? be32(p) : le32(p); }

static int records(Scanner *sc, int final) {
    size_t pos = 0;
    if (!sc->header_done) {
        if (sc->inlen < 24) {
            if (final) return unsupported("not a whole pcap file header");
            return 0;
        }
        uint32_t magic = le32(sc->in);
        if (magic == 0xA1B2C3D4 || magic == 0xA1B23C4D) sc->swapped = 0;
        else if (be32(sc->in) == 0xA1B2C3D4 || be32(sc->in) == 0xA1B23C4D) sc->swapped = 1;
        else return unsupported("not a classic pcap file");
        sc->nano = (sc->swapped ? be32(sc->in) : magic) == 0xA1B23C4D;
        sc->linktype = rd32(sc, sc->in + 20) & 0x0FFFFFFF;
        sc->header_done = 1;
        pos = 24;
    }
    double scale = sc->nano ? 1e-9 : 1e-6;
    uint32_t limit = sc->nano ? 1000000000u : 1000000u;
    while (sc->inlen - pos >= 16) {
        const uint8_t *h = sc->in + pos;
        uint32_t sec = rd32(sc, h), frac = rd32(sc, h + 4), caplen = rd32(sc, h + 8);
        if (caplen > MAX_RECORD || frac >= limit) return unsupported("a corrupt record header");
        if (sc->inlen - pos - 16 < caplen) break;
        sc->number++;
        sc->frames++;
        sc->bytes_read += caplen;
        double ts = (double)sec + (double)frac * scale;
        if (frame(sc, h + 16, caplen, sc->number, ts) < 0) return -1;
        pos += 16 + (size_t)caplen;
    }
    if (final && sc->inlen - pos) return unsupported("a truncated record");
    memmove(sc->in, sc->in + pos, sc->inlen - pos);
    sc->inlen -= pos;
    return 0;
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

/* (the columns: a list of NCOLS lists, declined) of the rows made since the last take */
static PyObject *take_rows(Scanner *sc) {
    PyObject *cols = PyList_New(NCOLS);
    if (!cols) return NULL;
    for (int i = 0; i < NCOLS; i++) {
        Py_INCREF(sc->cols[i]);
        PyList_SET_ITEM(cols, i, sc->cols[i]);
    }
    PyObject *out = Py_BuildValue("(NO)", cols, sc->declined);
    if (!out) return NULL;
    PyObject *declined = PyList_New(0);
    if (!declined || new_columns(sc) < 0) { Py_XDECREF(declined); Py_DECREF(out); return NULL; }
    Py_SETREF(sc->declined, declined);
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
        "{sLsLsLsLsLsL}", "frames", (long long)sc->frames, "decoded", (long long)sc->decoded,
        "not_dcerpc", (long long)sc->not_dcerpc, "pdus", (long long)sc->pdus,
        "calls", (long long)sc->calls, "bytes_read", (long long)sc->bytes_read);
    if (!summary) { Py_DECREF(rows); return NULL; }
    PyObject *out = Py_BuildValue("(OO)", rows, summary);
    Py_DECREF(rows);
    Py_DECREF(summary);
    return out;
}

static int Scanner_init(Scanner *sc, PyObject *args, PyObject *kw) {
    static char *names[] = {"name", "context_fn", "endpoint_fn", NULL};
    PyObject *name, *context_fn, *endpoint_fn;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "UOO", names, &name, &context_fn, &endpoint_fn))
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
    Py_XSETREF(sc->unknown, unknown);
    Py_XSETREF(sc->declined, PyList_New(0));
    if (!sc->declined || new_columns(sc) < 0) return -1;
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
    Py_XDECREF(sc->name);
    Py_XDECREF(sc->context_fn);
    Py_XDECREF(sc->endpoint_fn);
    Py_XDECREF(sc->unknown);
    for (int i = 0; i < NCOLS; i++) Py_XDECREF(sc->cols[i]);
    Py_XDECREF(sc->declined);
    Py_TYPE(sc)->tp_free((PyObject *)sc);
}

static PyMethodDef Scanner_methods[] = {
    {"feed", (PyCFunction)Scanner_feed, METH_O,
     "feed(octets) -> (columns, declined): the call rows completed by these octets of the "
     "file, as one list per column"},
    {"finish", (PyCFunction)Scanner_finish, METH_NOARGS,
     "finish() -> ((columns, declined), summary): the end of the file"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "captures._cdecode.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Scanner(name, context_fn, endpoint_fn): one classic pcap file, fed in pieces",
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
    "The compiled decoder of classic pcap files (captures/decode.py's common path).", -1,
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
