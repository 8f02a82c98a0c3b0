/*
 * floor-uring: bench/floor.c's client on io_uring, for bench/closed
 * (--uring-floor) to set beside the epoll floor. It answers one question: would
 * an io_uring transport lower a client's CPU per request on this machine?
 *
 * C connections, each with a send of its batch of P identical requests and a
 * recv queued on one ring; every completion that brings a batch's last reply
 * queues the connection's next send and recv. One io_uring_enter per round
 * submits everything queued and waits for the next completion, so a round of
 * many connections costs one system call instead of a send, a recv and a share
 * of an epoll_wait each. The ring is set up SINGLE_ISSUER | DEFER_TASKRUN (the
 * kernel's completion work runs inside that one call), sends post no completion
 * when they succeed (CQE_SKIP_SUCCESS); a kernel that refuses those flags gets
 * a plain ring. Like floor.c it parses nothing beyond byte counts and each
 * batch's first byte, and measures nothing; its flags, requests and connecting
 * are floor.h's. liburing (Debian's liburing-dev) only sets up the ring and
 * fills its entries.
 *
 * Usage: floor-uring -p PORT -c C -n N -P P -d SIZE -t get|set
 * Prints "GET: <rate> requests per second" like redis-benchmark -q.
 */
#include "floor.h"

#include <liburing.h>

#define RECV_BYTES (1 << 14) /* a longer batch of replies takes more than one recv */

static struct floor_run r;
static struct io_uring ring;
static int *fd;
static long *got, *want;
static char *bufs;
static long sent;

static struct io_uring_sqe *sqe(void) {
    struct io_uring_sqe *s = io_uring_get_sqe(&ring);
    if (!s) die("submission queue full");
    return s;
}

/* Queues a recv into connection i's buffer. */
static void queue_recv(int i) {
    struct io_uring_sqe *s = sqe();
    io_uring_prep_recv(s, fd[i], bufs + (size_t)RECV_BYTES * i, RECV_BYTES, 0);
    s->user_data = ((unsigned long)i << 1) | 1;
}

/* Queues connection i's next batch (a send) and the recv for its replies. */
static void queue_batch(int i) {
    long n = r.total - sent < r.pipeline ? r.total - sent : r.pipeline;
    struct io_uring_sqe *s = sqe();
    io_uring_prep_send(s, fd[i], r.batch, r.req_len * n, MSG_WAITALL); /* all of it, or an error */
    s->user_data = (unsigned long)i << 1;
    s->flags |= IOSQE_CQE_SKIP_SUCCESS;
    want[i] = r.reply_len * n;
    sent += n;
    queue_recv(i);
}

int main(int argc, char **argv) {
    r = floor_setup(argc, argv, "floor-uring");

    /* Two entries per connection in flight at most; the ring holds a round of them all. */
    unsigned entries = 64;
    while (entries < 2u * (unsigned)r.conns) entries *= 2;
    int err = io_uring_queue_init(entries, &ring, IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
    if (err == -EINVAL) err = io_uring_queue_init(entries, &ring, 0);
    if (err) {
        errno = -err;
        die("io_uring_queue_init");
    }
    fd = calloc(r.conns, sizeof *fd);
    got = calloc(r.conns, sizeof *got);
    want = calloc(r.conns, sizeof *want);
    bufs = malloc((size_t)RECV_BYTES * r.conns);
    if (!fd || !got || !want || !bufs) die("setup");
    for (int i = 0; i < r.conns; i++) fd[i] = floor_connect(&r);

    /* Batches are whole: the last connections to start may send fewer than P. */
    long done = 0;
    double start = now_s();
    for (int i = 0; i < r.conns && sent < r.total; i++) queue_batch(i);
    while (done < r.total) {
        struct __kernel_timespec ten_s = {.tv_sec = 10};
        struct io_uring_cqe *cqe;
        int res = io_uring_submit_and_wait_timeout(&ring, &cqe, 1, &ten_s, NULL);
        if (res == -EINTR) continue;
        if (res == -ETIME) die("no reply for 10 s");
        if (res < 0) {
            errno = -res;
            die("io_uring_submit_and_wait_timeout");
        }
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            seen++;
            int i = (int)(cqe->user_data >> 1);
            if (!(cqe->user_data & 1)) { /* only a failed send posts a completion */
                errno = -cqe->res;
                die("send");
            }
            if (cqe->res <= 0) {
                errno = cqe->res < 0 ? -cqe->res : 0;
                die("recv (connection closed?)");
            }
            if (got[i] == 0) floor_check_first(&r, bufs + (size_t)RECV_BYTES * i, cqe->res);
            got[i] += cqe->res;
            if (got[i] > want[i]) die("more reply bytes than asked for");
            if (got[i] < want[i]) {
                queue_recv(i);
                continue;
            }
            done += want[i] / r.reply_len;
            got[i] = 0;
            if (sent < r.total) queue_batch(i);
        }
        io_uring_cq_advance(&ring, seen);
    }
    floor_report(&r, now_s() - start);
    return 0;
}
