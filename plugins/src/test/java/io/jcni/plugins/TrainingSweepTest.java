package io.jcni.plugins;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which namespaces a training deletes before it makes its own: only those of trainings that died. */
class TrainingSweepTest {
    @Test
    void onlyNamespacesOfDeadTrainingsAreSwept() {
        Set<Long> alive = Set.of(100L);
        List<String> names = List.of(
                "jcni-train-h-100-0a1b2c3d", "jcni-train-p-100-0a1b2c3d", // a training still running
                "jcni-train-h-200-99887766", "jcni-train-p-200-99887766", // one that was killed
                "jcni-train-h-1a2b3c4d", // an older training's name without a pid: not judged
                "jcni-train-h-x1-00", "cni-1234", "jcni-train-q-300-00", "jcni-train-h--00");
        assertEquals(List.of("jcni-train-h-200-99887766", "jcni-train-p-200-99887766"),
                Training.deadTrainingNamespaces(names, alive::contains));
    }
}
