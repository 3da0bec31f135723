"""The places of the students in flight: taken at a student's start, given back at its end or once,
earlier, when it only waits for its row's reference run, and lent while it is away (flight.py)."""

import threading
import unittest

from grader.stages.flight import Flight

WAIT_S = 5.0


class FlightTest(unittest.TestCase):
    def test_a_student_that_leaves_early_lets_the_next_one_start_and_gives_its_place_back_once(self):
        flight = Flight(1)
        started, left, finish = threading.Event(), threading.Event(), threading.Event()

        def next_student():
            with flight.place("ben"):
                started.set()
                finish.wait(WAIT_S)

        with flight.place("amy"):
            thread = threading.Thread(target=next_student)
            thread.start()
            self.assertFalse(started.wait(0.2), "ben started while amy held the only place")
            flight.leave("amy")
            left.set()
            self.assertTrue(started.wait(WAIT_S), "ben did not start when amy gave her place back")
            flight.leave("amy")   # once only: a second leave gives nothing back
            self.assertEqual(flight.holding(), 1)
        self.assertEqual(flight.holding(), 1, "amy's end gave back no second place")
        late = threading.Event()

        def third():
            with flight.place("cal"):
                late.set()

        other = threading.Thread(target=third)
        other.start()
        self.assertFalse(late.wait(0.2), "cal started while ben held the only place")
        finish.set()
        thread.join(WAIT_S)
        self.assertTrue(late.wait(WAIT_S))
        other.join(WAIT_S)
        self.assertEqual(flight.holding(), 0)

    def test_leaving_without_a_place_gives_nothing(self):
        flight = Flight(2)
        flight.leave("nobody")
        with flight.place("amy"), flight.place("ben"):
            self.assertEqual(flight.holding(), 2)
            got, done = threading.Event(), threading.Event()

            def cal():
                with flight.place("cal"):
                    got.set()
                    done.wait(WAIT_S)

            thread = threading.Thread(target=cal)
            thread.start()
            self.assertFalse(got.wait(0.2), "a third place out of two")
            flight.leave("amy")
            self.assertTrue(got.wait(WAIT_S))
            done.set()
            thread.join(WAIT_S)

    def test_places_go_in_the_class_order_whichever_student_asks_first(self):
        flight, order, threads = Flight(1), [], []

        def student(position):
            with flight.place(f"s{position}", position):
                order.append(position)

        for position in (3, 1, 2, 0):   # the later students ask first
            threads.append(threading.Thread(target=student, args=(position,)))
            threads[-1].start()
            threading.Event().wait(0.05)
        for thread in threads:
            thread.join(WAIT_S)
        self.assertEqual(order, [0, 1, 2, 3])


    def test_a_student_away_lends_its_place_and_gets_one_back_before_a_new_student(self):
        flight = Flight(1)
        events, lock = [], threading.Lock()
        ben_in, ben_done, away_over, amy_back = (threading.Event() for _ in range(4))

        def log(what):
            with lock:
                events.append(what)

        def ben():
            with flight.place("ben", 1):
                log("ben starts")
                ben_in.set()
                ben_done.wait(WAIT_S)
                log("ben ends")

        def cal():
            with flight.place("cal", 2):
                log("cal starts")

        def amy():
            with flight.place("amy", 0):
                with flight.away("amy"):
                    self.assertTrue(ben_in.wait(WAIT_S), "ben did not get amy's place while she was away")
                    away_over.wait(WAIT_S)
                log("amy back")
                amy_back.set()
                self.assertEqual(flight.holding(), 1)
            log("amy ends")

        threads = [threading.Thread(target=target) for target in (amy, ben, cal)]
        for thread in threads:
            thread.start()
        self.assertTrue(ben_in.wait(WAIT_S))
        away_over.set()
        self.assertFalse(amy_back.wait(0.2), "amy came back while ben held the only place")
        ben_done.set()
        for thread in threads:
            thread.join(WAIT_S)
        self.assertEqual(events, ["ben starts", "ben ends", "amy back", "amy ends", "cal starts"],
                         "amy, back, goes before cal, who had not started")
        self.assertEqual(flight.holding(), 0)

    def test_away_without_a_place_takes_none(self):
        flight = Flight(1)
        with flight.place("amy"):
            flight.leave("amy")   # in her timing
            with flight.away("amy"):
                self.assertEqual(flight.holding(), 0)
            self.assertEqual(flight.holding(), 0)


if __name__ == "__main__":
    unittest.main()
