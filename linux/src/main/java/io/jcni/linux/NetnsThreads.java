package io.jcni.linux;

import java.util.ArrayDeque;

/**
 * The threads behind {@link Netns#run}: each open Netns that runs code gets a {@link Worker}, a
 * queue of jobs served by one platform thread ({@code Carrier}) that entered the namespace for as
 * long as the Netns is open. setns(2) moves one OS thread only, and Java cannot pin a virtual or
 * pooled thread to one for a task, so the work goes to a thread that stays in the namespace.
 * Carriers are pooled: at close a carrier goes back to the process's namespace and waits, idle,
 * for the next Netns.
 *
 * <p>Plain classes and monitors instead of lambdas and java.util.concurrent: this is on every
 * plugin's cold path, where each first lambda or builder costs milliseconds (plugins/README.md).
 */
final class NetnsThreads {
    private NetnsThreads() {}

    /** A namespace's queue of jobs, served by one {@link Carrier} thread inside the namespace until the Netns closes. */
    static final class Worker {
        private final ArrayDeque<Job<?>> queue = new ArrayDeque<>();
        private final int nsFd;
        private final String path;
        final Thread thread;
        private boolean stopping;
        private boolean left; // the carrier is out of the namespace and done with this worker

        Worker(int nsFd, String path) {
            this.nsFd = nsFd;
            this.path = path;
            thread = Carrier.serve(this);
        }

        /** Runs on the carrier, inside the namespace (or not, when entering failed), until stopped and drained. */
        void serve(ErrnoException entryFailure) {
            while (true) {
                Job<?> job;
                synchronized (this) {
                    while (queue.isEmpty() && !stopping) {
                        try {
                            wait();
                        } catch (InterruptedException e) {
                            // Only stop() ends this: a pending caller must get an answer.
                        }
                    }
                    job = queue.poll();
                    if (job == null) return; // stopping and drained
                }
                if (entryFailure != null) {
                    job.fail(entryFailure);
                } else {
                    job.runHere();
                }
            }
        }

        synchronized void markLeft() {
            left = true;
            notifyAll();
        }

        <T, X extends Exception> T submit(Netns.Task<T, X> task) throws X {
            Job<T> job = new Job<>(task);
            synchronized (this) {
                if (stopping) throw new IllegalStateException("netns closed");
                queue.add(job);
                notifyAll();
            }
            return job.await();
        }

        /**
         * Stops serving and waits until the carrier has left the namespace, so that a closed Netns
         * no longer keeps its namespace alive through a thread.
         */
        void stop() {
            boolean interrupted = false;
            synchronized (this) {
                stopping = true;
                notifyAll();
                if (Thread.currentThread().threadId() == thread.threadId()) return;
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!left) {
                    long wait = (deadline - System.nanoTime()) / 1_000_000;
                    if (wait <= 0) break;
                    try {
                        wait(wait);
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /**
     * A platform thread that serves one namespace's {@link Worker} at a time: it enters the
     * namespace, serves until the Netns closes, goes back to the process's namespace and waits, idle,
     * for the next one. A fresh thread per namespace cost jcnid two thread starts and exits per
     * request (the caller's namespace and the container's), most of its time in the netns phase
     * (docs/performance.md). A thread that cannot go back ends instead of serving again, so no job
     * ever runs in a namespace it did not ask for; idle threads end after {@link #IDLE_MILLIS}.
     */
    private static final class Carrier implements Runnable {
        private static final ArrayDeque<Carrier> IDLE = new ArrayDeque<>(); // guarded by itself
        private static final int MAX_IDLE = 64; // 50 concurrent pods use about 50 at once
        private static final long IDLE_MILLIS = 30_000;
        /** The process's own namespace (its main thread's), where idle carriers wait; opened once. */
        private static int homeFd = -1; // guarded by IDLE

        private final Thread thread;
        private Worker assigned; // guarded by this

        private Carrier() {
            thread = new Thread(this, "jcni-netns idle");
            thread.setDaemon(true);
        }

        /** Hands {@code w} to an idle carrier, or to a new one; returns the serving thread. */
        static Thread serve(Worker w) {
            Carrier c;
            synchronized (IDLE) {
                if (homeFd < 0) homeFd = Native.open("/proc/self/ns/net", Native.O_RDONLY, 0);
                c = IDLE.pollFirst(); // the most recently used: its stack is still warm
            }
            if (c == null) {
                c = new Carrier();
                c.assign(w);
                c.thread.start();
            } else {
                c.assign(w);
            }
            return c.thread;
        }

        private synchronized void assign(Worker w) {
            assigned = w;
            notifyAll();
        }

        /** The next worker, or null when none came within {@code millis} (0: wait for ever). */
        private synchronized Worker next(long millis) {
            long deadline = System.nanoTime() + millis * 1_000_000;
            while (assigned == null) {
                long wait = millis == 0 ? 0 : (deadline - System.nanoTime()) / 1_000_000;
                if (millis != 0 && wait <= 0) return null;
                try {
                    wait(wait);
                } catch (InterruptedException e) {
                    // Idle threads end by timing out, not by interruption.
                }
            }
            Worker w = assigned;
            assigned = null;
            return w;
        }

        @Override
        public void run() {
            Worker w = next(0);
            while (w != null) {
                thread.setName("jcni-netns " + w.path);
                ErrnoException entryFailure = null;
                try {
                    Native.setns(w.nsFd, Native.CLONE_NEWNET);
                } catch (ErrnoException e) {
                    entryFailure = e;
                }
                boolean home = true;
                try {
                    w.serve(entryFailure);
                } finally {
                    if (entryFailure == null) home = goHome();
                    w.markLeft();
                }
                if (!home) return;
                thread.setName("jcni-netns idle");
                w = idle();
            }
        }

        private boolean goHome() {
            try {
                int fd;
                synchronized (IDLE) {
                    fd = homeFd;
                }
                Native.setns(fd, Native.CLONE_NEWNET);
                return true;
            } catch (ErrnoException e) {
                return false;
            }
        }

        /** Waits in the pool for the next worker; null when this thread should end. */
        private Worker idle() {
            synchronized (IDLE) {
                if (IDLE.size() >= MAX_IDLE) return null;
                IDLE.addFirst(this);
            }
            Worker w = next(IDLE_MILLIS);
            if (w != null) return w;
            synchronized (IDLE) {
                if (IDLE.remove(this)) return null; // timed out, and nobody took us meanwhile
            }
            return next(0); // taken just as the wait ended: the assignment is on its way
        }
    }

    private static final class Job<T> {
        private final Netns.Task<T, ?> task;
        private T value;
        private Throwable failure;
        private boolean done;

        Job(Netns.Task<T, ?> task) {
            this.task = task;
        }

        void runHere() {
            T v = null;
            Throwable f = null;
            try {
                v = task.call();
            } catch (Throwable t) {
                f = t;
            }
            synchronized (this) {
                value = v;
                failure = f;
                done = true;
                notifyAll();
            }
        }

        synchronized void fail(Throwable t) {
            failure = t;
            done = true;
            notifyAll();
        }

        /** Waits uninterruptibly: the job may already be changing the namespace's state. */
        <X extends Exception> T await() throws X {
            boolean interrupted = false;
            synchronized (this) {
                while (!done) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
            if (failure == null) return value;
            if (failure instanceof RuntimeException e) throw e;
            if (failure instanceof Error e) throw e;
            @SuppressWarnings("unchecked")
            X x = (X) failure;
            throw x;
        }
    }
}
