/*
 * floor: the least a closed-loop client can cost on this machine, for
 * bench/closed to set beside the real tools.
 *
 * C connections, each writing a batch of P identical requests in one send()
 * and reading the replies with one recv() per readiness event (level-triggered
 * epoll, registered once), the next batch sent when P replies' bytes are in.
 * It parses nothing beyond counting bytes (every reply of a run has the same
 * length) and checking each batch's first byte, and measures nothing: what it
 * costs per request is the kernel's loopback path plus a few instructions.
 * Written in C, with no library, so nothing stands between it and the calls;
 * its flags, requests and connecting are floor.h's (shared with floor-uring.c).
 *
 * Usage: floor -p PORT -c C -n N -P P -d SIZE -t get|set
 * Prints "GET: <rate> requests per second" like redis-benchmark -q.
 */
#include "floor.h"

#include <fcntl.h>
#include <sys/epoll.h>

int main(int argc, char **argv) {
    struct floor_run r = floor_setup(argc, argv, "floor");
    int conns = r.conns;
    int *fd = calloc(conns, sizeof *fd);
    long *got = calloc(conns, sizeof *got);
    long *want = calloc(conns, sizeof *want);
    char *buf = malloc(1 << 16);
    struct epoll_event *events = calloc(conns, sizeof *events);
    int ep = epoll_create1(0);
    if (!fd || !got || !want || !buf || !events || ep < 0) die("setup");
    for (int i = 0; i < conns; i++) {
        fd[i] = floor_connect(&r);
        fcntl(fd[i], F_SETFL, O_NONBLOCK);
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (unsigned)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &e)) die("epoll_ctl");
    }

    /* Batches are whole: the last connections to start may send fewer than P. */
    long sent = 0, done = 0;
    double start = now_s();
    for (int i = 0; i < conns && sent < r.total; i++) {
        long n = r.total - sent < r.pipeline ? r.total - sent : r.pipeline;
        if (send(fd[i], r.batch, r.req_len * n, 0) != (ssize_t)(r.req_len * n)) die("send");
        want[i] = r.reply_len * n;
        sent += n;
    }
    while (done < r.total) {
        int n = epoll_wait(ep, events, conns, 10000);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die(n == 0 ? "no reply for 10 s" : "epoll_wait");
        for (int k = 0; k < n; k++) {
            int i = (int)events[k].data.u32;
            ssize_t got_now = recv(fd[i], buf, 1 << 16, 0);
            if (got_now < 0 && errno == EAGAIN) continue;
            if (got_now <= 0) die("recv (connection closed?)");
            if (got[i] == 0) floor_check_first(&r, buf, got_now);
            got[i] += got_now;
            if (got[i] < want[i]) continue;
            if (got[i] > want[i]) die("more reply bytes than asked for");
            done += want[i] / r.reply_len;
            got[i] = 0;
            if (sent < r.total) {
                long m = r.total - sent < r.pipeline ? r.total - sent : r.pipeline;
                if (send(fd[i], r.batch, r.req_len * m, 0) != (ssize_t)(r.req_len * m)) die("send");
                want[i] = r.reply_len * m;
                sent += m;
            }
        }
    }
    floor_report(&r, now_s() - start);
    return 0;
}
