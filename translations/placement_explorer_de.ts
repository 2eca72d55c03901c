<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de_DE">
<context>
    <name>Exports</name>
    <message>
        <location filename="../app/gui/Exports.cpp" line="36"/>
        <source>Cannot write %1: %2</source>
        <translation>%1 kann nicht geschrieben werden: %2</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="55"/>
        <location filename="../app/gui/Exports.cpp" line="70"/>
        <location filename="../app/gui/Exports.cpp" line="75"/>
        <source>Cannot write %1</source>
        <translation>%1 kann nicht geschrieben werden</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="102"/>
        <source>There are no run times to export: run the plan first (Run ▸ Run the Plan).</source>
        <translation>Es gibt keine Laufzeiten zum Exportieren: zuerst den Plan ausführen (Ausführen ▸ Den Plan ausführen).</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="117"/>
        <source>&apos;%1&apos; is not a Relay operator; export a JSON graph instead.</source>
        <translation>„%1“ ist kein Relay-Operator; stattdessen einen JSON-Graphen exportieren</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="127"/>
        <source>Netron annotations need a model read from ONNX; export a JSON graph or the plan report instead.</source>
        <translation>Netron-Anmerkungen brauchen ein aus ONNX gelesenes Modell; stattdessen einen JSON-Graphen oder den Planbericht exportieren.</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="160"/>
        <source>Unknown export &apos;%1&apos;.</source>
        <translation>Unbekannter Export „%1“.</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="168"/>
        <source>Image (PNG)…</source>
        <translation>Bild (PNG)…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="168"/>
        <source>PNG image (*.png)</source>
        <translation>PNG-Bild (*.png)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="169"/>
        <source>Vector image (SVG)…</source>
        <translation>Vektorbild (SVG)…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="170"/>
        <source>SVG image (*.svg)</source>
        <translation>SVG-Bild (*.svg)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="171"/>
        <source>Relay text with placement…</source>
        <translation>Relay-Text mit Platzierung…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="172"/>
        <source>Relay text (*.relay)</source>
        <translation>Relay-Text (*.relay)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="173"/>
        <source>JSON graph…</source>
        <translation>JSON-Graph…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="173"/>
        <source>JSON graph (*.json)</source>
        <translation>JSON-Graph (*.json)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="174"/>
        <source>Plan report (JSON)…</source>
        <translation>Planbericht (JSON)…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="175"/>
        <source>Plan report (*.json)</source>
        <translation>Planbericht (*.json)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="176"/>
        <source>Model Explorer overlay: devices…</source>
        <translation>Model-Explorer-Overlay: Geräte…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="177"/>
        <location filename="../app/gui/Exports.cpp" line="179"/>
        <source>Model Explorer node data (*.json)</source>
        <translation>Model-Explorer-Knotendaten (*.json)</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="178"/>
        <source>Model Explorer overlay: run times…</source>
        <translation>Model-Explorer-Overlay: Laufzeiten…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="181"/>
        <source>Netron: ONNX model annotated with placement and times…</source>
        <translation>Netron: ONNX-Modell mit Platzierung und Zeiten…</translation>
    </message>
    <message>
        <location filename="../app/gui/Exports.cpp" line="182"/>
        <source>ONNX model (*.onnx)</source>
        <translation>ONNX-Modell (*.onnx)</translation>
    </message>
</context>
<context>
    <name>GraphScene</name>
    <message>
        <location filename="../views/GraphScene.cpp" line="757"/>
        <source>split ⇉ %1</source>
        <translation>Aufteilung ⇉ %1</translation>
    </message>
    <message>
        <location filename="../views/GraphScene.cpp" line="761"/>
        <location filename="../views/GraphScene.cpp" line="768"/>
        <source>concat ⇇</source>
        <translation>Verkettung ⇇</translation>
    </message>
</context>
<context>
    <name>HostsRunner</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="165"/>
        <source>%1 compute</source>
        <translation>%1 Rechnen</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="174"/>
        <source>inputs → %1</source>
        <translation>Eingaben → %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="176"/>
        <source>input %1: %2 ms</source>
        <translation>Eingabe %1: %2 ms</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="184"/>
        <location filename="../app/gui/HostsRun.cpp" line="187"/>
        <source>copies %1 → %2</source>
        <translation>Kopien %1 → %2</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="192"/>
        <source>copy %1, %2 → %3, %4 bytes: %5 ms</source>
        <translation>Kopie %1, %2 → %3, %4 Bytes: %5 ms</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="205"/>
        <source>waiting for %1</source>
        <translation>wartet auf %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="206"/>
        <source>idle %1 ms, waiting for %2</source>
        <translation>%1 ms untätig, wartet auf %2</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="210"/>
        <source>%1 (%2) on %3 [%4]: %5 ms</source>
        <translation>%1 (%2) auf %3 [%4]: %5 ms</translation>
    </message>
</context>
<context>
    <name>LanguageMenu</name>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="15"/>
        <source>&amp;Language</source>
        <translation>&amp;Sprache</translation>
    </message>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="19"/>
        <source>System Default</source>
        <translation>Systemvorgabe</translation>
    </message>
    <message>
        <location filename="../app/gui/LanguageMenu.cpp" line="31"/>
        <source>The new language applies when Placement Explorer starts again.</source>
        <translation>Die neue Sprache gilt beim nächsten Start von Placement Explorer.</translation>
    </message>
</context>
<context>
    <name>NodeItem</name>
    <message numerus="yes">
        <location filename="../views/NodeItem.cpp" line="203"/>
        <source> (fused, %n more)</source>
        <translation>
            <numerusform> (fusioniert, %n weiterer)</numerusform>
            <numerusform> (fusioniert, %n weitere)</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/NodeItem.cpp" line="214"/>
        <source>fused into %1</source>
        <translation>in %1 fusioniert</translation>
    </message>
</context>
<context>
    <name>NodeMenu</name>
    <message>
        <location filename="../views/NodeMenu.cpp" line="40"/>
        <source>Collapse %1</source>
        <translation>%1 zuklappen</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="54"/>
        <source>Pin to</source>
        <translation>Festlegen auf</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="59"/>
        <source>Clear Pin</source>
        <translation>Festlegung entfernen</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="66"/>
        <source>Split Across Devices…</source>
        <translation>Auf Geräte aufteilen…</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="71"/>
        <source>Remove Split</source>
        <translation>Aufteilung entfernen</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="78"/>
        <source>Expand %1</source>
        <translation>%1 aufklappen</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="83"/>
        <source>Collapse</source>
        <translation>Zuklappen</translation>
    </message>
    <message>
        <location filename="../views/NodeMenu.cpp" line="89"/>
        <source>Fit Selection</source>
        <translation>Auswahl einpassen</translation>
    </message>
</context>
<context>
    <name>PlanSummary</name>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="53"/>
        <source>%n copy(ies), %1 copied</source>
        <translation>
            <numerusform>%n Kopie, %1 kopiert</numerusform>
            <numerusform>%n Kopien, %1 kopiert</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="57"/>
        <source>(sizes at %1)</source>
        <translation>(Größen bei %1)</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="59"/>
        <source>%n region(s) split</source>
        <translation>
            <numerusform>%n Bereich aufgeteilt</numerusform>
            <numerusform>%n Bereiche aufgeteilt</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="62"/>
        <source>pipelined in %n micro-batch(es)</source>
        <translation>
            <numerusform>in %n Mikro-Batch gepipelinet</numerusform>
            <numerusform>in %n Mikro-Batches gepipelinet</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="67"/>
        <source>a stream of %n batch(es)</source>
        <translation>
            <numerusform>ein Strom von %n Batch</numerusform>
            <numerusform>ein Strom von %n Batches</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="73"/>
        <source>peak memory: %1</source>
        <translation>Spitzenspeicher: %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="76"/>
        <source>%n conflict(s)</source>
        <translation>
            <numerusform>%n Konflikt</numerusform>
            <numerusform>%n Konflikte</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="78"/>
        <source>predicting…</source>
        <translation>Vorhersage läuft…</translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="81"/>
        <source>predicted latency: %1</source>
        <translation>vorhergesagte Latenz: %1</translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="85"/>
        <source>predicted latency at %2: %1</source>
        <translation>vorhergesagte Latenz bei %2: %1</translation>
    </message>
    <message>
        <location filename="../views/PlanSummary.cpp" line="90"/>
        <source>planned in %1 ms</source>
        <translation>geplant in %1 ms</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PlanSummary.cpp" line="93"/>
        <source>%n node(s) folded at load</source>
        <translation>
            <numerusform>%n Knoten beim Laden gefaltet</numerusform>
            <numerusform>%n Knoten beim Laden gefaltet</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../views/CopyBadgeItem.cpp" line="26"/>
        <source>device copy %1</source>
        <translation>Gerätekopie %1</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/GroupItem.cpp" line="16"/>
        <source>%1: %n node(s), collapsed (double-click or the context menu expands it)</source>
        <translation>
            <numerusform>%1: %n Knoten, zugeklappt (Doppelklick oder Kontextmenü klappt auf)</numerusform>
            <numerusform>%1: %n Knoten, zugeklappt (Doppelklick oder Kontextmenü klappt auf)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/FrameItem.cpp" line="14"/>
        <source>%1: %n node(s), open (double-click its title to collapse it)</source>
        <translation>
            <numerusform>%1: %n Knoten, aufgeklappt (Doppelklick auf den Titel klappt zu)</numerusform>
            <numerusform>%1: %n Knoten, aufgeklappt (Doppelklick auf den Titel klappt zu)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/FrameItem.cpp" line="20"/>
        <location filename="../views/GroupItem.cpp" line="88"/>
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n Knoten</numerusform>
            <numerusform>%n Knoten</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/GroupItem.cpp" line="90"/>
        <source>%n pin(s)</source>
        <translation>
            <numerusform>%n Festlegung</numerusform>
            <numerusform>%n Festlegungen</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>RunPanel</name>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="425"/>
        <source>%1 compute</source>
        <translation>%1 Rechnen</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="440"/>
        <source>%1 (%2) on %3 [%4]: %5 ms</source>
        <translation>%1 (%2) auf %3 [%4]: %5 ms</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="446"/>
        <source>µb%1 %2</source>
        <translation>µB%1 %2</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="447"/>
        <source>, micro-batch %1</source>
        <translation>, Mikro-Batch %1</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="455"/>
        <source>copies %1 → %2</source>
        <translation>Kopien %1 → %2</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="462"/>
        <source>copy %1, %2: %3 ms</source>
        <translation>Kopie %1, %2: %3 ms</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="466"/>
        <source>inputs → %1</source>
        <translation>Eingaben → %1</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="468"/>
        <source>input %1: %2 ms</source>
        <translation>Eingabe %1: %2 ms</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="485"/>
        <source>waiting for %1</source>
        <translation>wartet auf %1</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="491"/>
        <source>idle %1 ms, waiting for %2</source>
        <translation>%1 ms untätig, wartet auf %2</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../app/gui/main.cpp" line="120"/>
        <source>Decide where each operator of a dataflow graph runs on a multi-device machine.</source>
        <translation>Entscheiden, wo jeder Operator eines Datenflussgraphen auf einer Maschine mit mehreren Geräten läuft.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="126"/>
        <source>A Relay, ONNX or JSON graph (default: the bundled example).</source>
        <translation>Ein Relay-, ONNX- oder JSON-Graph (Standard: das mitgelieferte Beispiel).</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="130"/>
        <source>Write a PNG of the main window and exit.</source>
        <translation>Ein PNG des Hauptfensters schreiben und beenden.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="134"/>
        <source>Input format: relay, json, onnx or auto.</source>
        <translation>Eingabeformat: relay, json, onnx oder auto.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="135"/>
        <source>Virtual devices, NAME:KIND[:mem=SIZE],...</source>
        <translation>Virtuelle Geräte, NAME:ART[:mem=GRÖSSE],...</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="136"/>
        <source>Where unconstrained work goes.</source>
        <translation>Wohin nicht festgelegte Arbeit geht.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="137"/>
        <source>Where host-only ops run.</source>
        <translation>Wo Operatoren laufen, die nur auf dem Host laufen.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="138"/>
        <source>Pin NODE=DEVICE (repeatable).</source>
        <translation>KNOTEN=GERÄT festlegen (wiederholbar).</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="139"/>
        <source>Pin NODE=DEVICE, result included (repeatable).</source>
        <translation>KNOTEN=GERÄT festlegen, samt Ergebnis (wiederholbar).</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="140"/>
        <source>Op rule OP=DEVICE (repeatable).</source>
        <translation>Operatorregel OP=GERÄT (wiederholbar).</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="141"/>
        <source>Fallback device for ops no rule covers.</source>
        <translation>Ausweichgerät für Operatoren ohne Regel.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="143"/>
        <source>Split NODES=DEV[:SHARE],... on the batch (repeatable).</source>
        <translation>KNOTEN=GERÄT[:ANTEIL],... auf dem Batch aufteilen (wiederholbar).</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="144"/>
        <source>Planner mode: demand, unify or auto.</source>
        <translation>Planermodus: demand, unify oder auto.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="146"/>
        <source>Constants on several devices: replicate or copy.</source>
        <translation>Konstanten auf mehreren Geräten: replicate oder copy.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="148"/>
        <source>Pipeline the plan in M micro-batches of the batch.</source>
        <translation>Den Plan in M Mikro-Batches des Batches als Pipeline ausführen.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="149"/>
        <source>Throughput mode: N batches back to back through the pipeline.</source>
        <translation>Durchsatzmodus: N Batches direkt nacheinander durch die Pipeline.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="159"/>
        <source>Run the plan before the screenshot: cuda devices on their GPU where this machine has it, the others on the host and virtual CPUs.</source>
        <translation>Den Plan vor dem Bildschirmfoto ausführen: cuda-Geräte auf ihrer GPU, wo dieser Rechner sie hat, die übrigen auf dem Host und virtuellen CPUs.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="164"/>
        <source>Collapse the top-level name scopes into groups.</source>
        <translation>Die obersten Namensbereiche zu Gruppen zuklappen.</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="167"/>
        <source>Open this collapsed name scope as a frame (repeatable; with --screenshot).</source>
        <translation>Diesen zugeklappten Namensbereich als Rahmen öffnen (wiederholbar; mit --screenshot).</translation>
    </message>
    <message>
        <location filename="../app/gui/main.cpp" line="173"/>
        <source>Run the plan under mpirun on N ranks of this machine before the screenshot, the devices on the ranks Run ▸ Run on Hosts proposes.</source>
        <translation>Den Plan vor dem Bildschirmfoto mit mpirun auf N Rängen dieses Rechners ausführen, die Geräte auf den Rängen, die Ausführen ▸ Auf Hosts ausführen vorschlägt.</translation>
    </message>
</context>
<context>
    <name>placer::gui::DeviceDialog</name>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="26"/>
        <location filename="../app/gui/DeviceDialog.cpp" line="207"/>
        <source>Devices</source>
        <translation>Geräte</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="29"/>
        <source>Virtual devices are what plans name; each runs on a physical device when the plan runs (cpu, vcpuN, cuda:N).</source>
        <translation>Pläne nennen virtuelle Geräte; jedes läuft beim Ausführen auf einem physischen Gerät (cpu, vcpuN, cuda:N).</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Name</source>
        <translation>Name</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Kind</source>
        <translation>Art</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Memory capacity</source>
        <translation>Speicherkapazität</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Runs on</source>
        <translation>Läuft auf</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="34"/>
        <source>Colour</source>
        <translation>Farbe</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="39"/>
        <source>Add</source>
        <translation>Hinzufügen</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="40"/>
        <source>Remove</source>
        <translation>Entfernen</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="48"/>
        <source>Default device (unconstrained work):</source>
        <translation>Standardgerät (ungebundene Arbeit):</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="49"/>
        <source>Host device (host-only ops):</source>
        <translation>Host-Gerät (Nur-Host-Operatoren):</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="101"/>
        <location filename="../app/gui/DeviceDialog.cpp" line="190"/>
        <source>(automatic)</source>
        <translation>(automatisch)</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="112"/>
        <source>double-click</source>
        <translation>Doppelklick</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="165"/>
        <source>row %1: a device needs a name without spaces, &apos;:&apos;, &apos;,&apos; or &apos;=&apos;</source>
        <translation>Zeile %1: ein Gerät braucht einen Namen ohne Leerzeichen, „:“, „,“ oder „=“</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="169"/>
        <source>two devices are called &apos;%1&apos;</source>
        <translation>zwei Geräte heißen „%1“</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="179"/>
        <source>&apos;%1&apos;: memory capacity &apos;%2&apos; is not a size such as 8GiB or 512MB</source>
        <translation>„%1“: Speicherkapazität „%2“ ist keine Größe wie 8GiB oder 512MB</translation>
    </message>
    <message>
        <location filename="../app/gui/DeviceDialog.cpp" line="194"/>
        <source>a plan needs at least one device</source>
        <translation>ein Plan braucht mindestens ein Gerät</translation>
    </message>
</context>
<context>
    <name>placer::gui::HostsDialog</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="478"/>
        <source>%1 is not a host file (not a regular file of at most 1 MiB)</source>
        <translation>%1 ist keine Hostdatei (keine gewöhnliche Datei von höchstens 1 MiB)</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="485"/>
        <source>Cannot read the host file %1: %2</source>
        <translation>Die Hostdatei %1 ist nicht lesbar: %2</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="501"/>
        <source>%1, line %2: %3</source>
        <translation>%1, Zeile %2: %3</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="505"/>
        <source>the line starts with &quot;%1&quot;, not a host name</source>
        <translation>die Zeile beginnt mit „%1“, nicht mit einem Hostnamen</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="522"/>
        <source>&quot;%1&quot; is not slots=N or max_slots=N</source>
        <translation>„%1“ ist weder slots=N noch max_slots=N</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="529"/>
        <source>&quot;%1&quot; is not a number of slots (1 or more)</source>
        <translation>„%1“ ist keine Anzahl von Slots (1 oder mehr)</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="548"/>
        <source>%1 names no host</source>
        <translation>%1 nennt keinen Host</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="553"/>
        <source>Run on Hosts</source>
        <translation>Auf Hosts ausführen</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="556"/>
        <source>The plan runs under mpirun: one placer process (rank) per slot, each virtual device on the rank and physical device chosen below. Copies between ranks go over MPI. The model file must be readable at the same path on every host.</source>
        <translation>Der Plan läuft unter mpirun: ein placer-Prozess (Rang) je Slot, jedes virtuelle Gerät auf dem unten gewählten Rang und physischen Gerät. Kopien zwischen Rängen laufen über MPI. Die Modelldatei muss auf jedem Host unter demselben Pfad lesbar sein.</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="563"/>
        <source>This machine</source>
        <translation>Dieser Rechner</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="566"/>
        <source>Hosts in a file</source>
        <translation>Hosts aus einer Datei</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="574"/>
        <source>an Open MPI host file: one host a line, slots=N</source>
        <translation>eine Open-MPI-Hostdatei: ein Host je Zeile, slots=N</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="575"/>
        <source>Browse…</source>
        <translation>Durchsuchen…</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="577"/>
        <source>Host file</source>
        <translation>Hostdatei</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="592"/>
        <source>Ranks:</source>
        <translation>Ränge:</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Kind</source>
        <translation>Art</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Rank</source>
        <translation>Rang</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Physical device there</source>
        <translation>Physisches Gerät dort</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="601"/>
        <source>Host</source>
        <translation>Host</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="649"/>
        <source>Run</source>
        <translation>Ausführen</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="679"/>
        <source>Every rank on this machine (%1).</source>
        <translation>Jeder Rang auf diesem Rechner (%1).</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="681"/>
        <source>Choose a host file.</source>
        <translation>Wählen Sie eine Hostdatei.</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="691"/>
        <source>%1 (%n slot(s))</source>
        <translation>
            <numerusform>%1 (%n Slot)</numerusform>
            <numerusform>%1 (%n Slots)</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="693"/>
        <source>%1 (a slot per core)</source>
        <translation>%1 (ein Slot je Kern)</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="694"/>
        <source>%n host(s): %1.</source>
        <translation>
            <numerusform>%n Host: %1.</numerusform>
            <numerusform>%n Hosts: %1.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="698"/>
        <source>%1 ranks on %2 slots: mpirun starts more than one rank on a slot.</source>
        <translation>%1 Ränge auf %2 Slots: mpirun startet mehr als einen Rang je Slot.</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="715"/>
        <source>chosen by mpirun</source>
        <translation>wählt mpirun</translation>
    </message>
</context>
<context>
    <name>placer::gui::HostsRunner</name>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="246"/>
        <source>rank %1</source>
        <translation>Rang %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="247"/>
        <source>rank %1 on %2</source>
        <translation>Rang %1 auf %2</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/HostsRun.cpp" line="260"/>
        <source>&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %4 iterations, on %n rank(s)</source>
        <translation>
            <numerusform>&lt;b&gt;Latenz&lt;/b&gt; %1 ms Median (min %2, max %3) über %4 Iterationen, auf %n Rang</numerusform>
            <numerusform>&lt;b&gt;Latenz&lt;/b&gt; %1 ms Median (min %2, max %3) über %4 Iterationen, auf %n Rängen</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>runs on</source>
        <translation>läuft auf</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="269"/>
        <source>host</source>
        <translation>Host</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="270"/>
        <source>busy</source>
        <translation>belegt</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="286"/>
        <source>Rank %1 (%2) → rank %3 (%4): %5 copies, %6 bytes, %7 ms&lt;br&gt;</source>
        <translation>Rang %1 (%2) → Rang %3 (%4): %5 Kopien, %6 Bytes, %7 ms&lt;br&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="298"/>
        <source>Outputs not checked against a reference.</source>
        <translation>Ausgaben nicht mit einer Referenz verglichen.</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="300"/>
        <source>Outputs match the single-device reference (max abs diff %1).</source>
        <translation>Die Ausgaben stimmen mit der Ein-Geräte-Referenz überein (max. abs. Abweichung %1).</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="303"/>
        <source>&lt;b&gt;Outputs differ from the single-device reference&lt;/b&gt;: %1</source>
        <translation>&lt;b&gt;Die Ausgaben weichen von der Ein-Geräte-Referenz ab&lt;/b&gt;: %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="352"/>
        <source>A run on hosts is already going on.</source>
        <translation>Eine Ausführung auf Hosts läuft bereits.</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="358"/>
        <source>Cannot make a folder for the run&apos;s report: %1</source>
        <translation>Kein Ordner für den Bericht der Ausführung: %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="385"/>
        <source>Cannot start %1: %2 (is Open MPI installed?)</source>
        <translation>%1 lässt sich nicht starten: %2 (ist Open MPI installiert?)</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="421"/>
        <source>mpirun ended with status %1:
%2</source>
        <translation>mpirun endete mit Status %1:
%2</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="427"/>
        <source>the run wrote no %1</source>
        <translation>die Ausführung schrieb kein %1</translation>
    </message>
    <message>
        <location filename="../app/gui/HostsRun.cpp" line="443"/>
        <source>The run on hosts ended, but %1.
%2</source>
        <translation>Die Ausführung auf Hosts endete, aber %1.
%2</translation>
    </message>
</context>
<context>
    <name>placer::gui::MainWindow</name>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="71"/>
        <source>Placement Explorer</source>
        <translation>Placement Explorer</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="79"/>
        <source>&lt;b&gt;To place work&lt;/b&gt;, drag a device chip from the &lt;i&gt;Devices&lt;/i&gt; panel onto a node (or onto a selection). The planner re-infers everything else at once: fills show each node&apos;s device, dots mark pins, badges on edges are the copies the plan needs, and &lt;i&gt;Conflicts and notes&lt;/i&gt; says what it decided. Ctrl+Z undoes.</source>
        <translation>&lt;b&gt;Arbeit verteilen:&lt;/b&gt; einen Geräte-Chip aus dem Bereich &lt;i&gt;Geräte&lt;/i&gt; auf einen Knoten ziehen (oder auf eine Auswahl). Der Planer leitet alles andere sofort neu ab: Die Füllfarbe zeigt das Gerät jedes Knotens, Punkte markieren Festlegungen, Plaketten an Kanten sind die Kopien, die der Plan braucht, und &lt;i&gt;Konflikte und Hinweise&lt;/i&gt; sagt, was er entschieden hat. Strg+Z macht rückgängig.</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="113"/>
        <source>laying out</source>
        <translation>Layout läuft</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="181"/>
        <source>Devices</source>
        <translation>Geräte</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="190"/>
        <source>Rules</source>
        <translation>Regeln</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="195"/>
        <source>Conflicts and notes</source>
        <translation>Konflikte und Hinweise</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="200"/>
        <source>Properties</source>
        <translation>Eigenschaften</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="202"/>
        <source>&lt;opened&gt;</source>
        <translation>&lt;geöffnet&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="204"/>
        <source>History</source>
        <translation>Verlauf</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="217"/>
        <source>Run</source>
        <translation>Ausführen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="468"/>
        <source>Export failed</source>
        <translation>Export fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="236"/>
        <source>Plans</source>
        <translation>Pläne</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="229"/>
        <source>Restored the unsaved changes</source>
        <translation>Die ungesicherten Änderungen wurden wiederhergestellt</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="245"/>
        <source>Timeline</source>
        <translation>Zeitleiste</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="249"/>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="250"/>
        <source>&amp;Open…</source>
        <translation>&amp;Öffnen…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="252"/>
        <source>Open &amp;Recent</source>
        <translation>&amp;Zuletzt geöffnet</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="253"/>
        <source>Open the &amp;Example</source>
        <translation>&amp;Beispiel öffnen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="255"/>
        <source>&amp;Save Plan</source>
        <translation>Plan &amp;speichern</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="257"/>
        <source>Save Plan &amp;As…</source>
        <translation>Plan speichern &amp;unter…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="259"/>
        <source>Open &amp;Workspace…</source>
        <translation>&amp;Arbeitsbereich öffnen…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="260"/>
        <source>&amp;Export</source>
        <translation>&amp;Exportieren</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="272"/>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="274"/>
        <source>&amp;Edit</source>
        <translation>&amp;Bearbeiten</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="275"/>
        <source>&amp;Undo</source>
        <translation>&amp;Rückgängig</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="277"/>
        <source>&amp;Redo</source>
        <translation>&amp;Wiederholen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="282"/>
        <source>&amp;Clear Pins of Selection</source>
        <translation>Festlegungen der Auswahl &amp;entfernen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="285"/>
        <source>&amp;Split Across Devices…</source>
        <translation>Auf Geräte &amp;aufteilen…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="287"/>
        <source>Remove Split of Selection</source>
        <translation>Aufteilung der Auswahl entfernen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="289"/>
        <source>Copy Plan as Command &amp;Line</source>
        <translation>Plan als &amp;Befehlszeile kopieren</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="292"/>
        <source>Copied: %1</source>
        <translation>Kopiert: %1</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="296"/>
        <source>The placer run command that plans and runs what this window shows</source>
        <translation>Der placer-run-Befehl, der plant und ausführt, was dieses Fenster zeigt</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="298"/>
        <source>&amp;Find…</source>
        <translation>&amp;Suchen…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="304"/>
        <source>Find &amp;Next</source>
        <translation>&amp;Weitersuchen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="306"/>
        <source>Find &amp;Previous</source>
        <translation>&amp;Rückwärts suchen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="309"/>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="310"/>
        <source>&amp;Fit to Window</source>
        <translation>An &amp;Fenster anpassen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="312"/>
        <source>Fit &amp;Selection</source>
        <translation>&amp;Auswahl einpassen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="315"/>
        <source>&amp;Collapse Groups</source>
        <translation>Gruppen &amp;zuklappen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="316"/>
        <source>E&amp;xpand All Groups</source>
        <translation>Alle Gruppen &amp;aufklappen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="319"/>
        <source>Zoom &amp;In</source>
        <translation>Ver&amp;größern</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="321"/>
        <source>Zoom &amp;Out</source>
        <translation>Ver&amp;kleinern</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="325"/>
        <source>&amp;Devices</source>
        <translation>&amp;Geräte</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="326"/>
        <source>&amp;Edit Devices…</source>
        <translation>Geräte &amp;bearbeiten…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="328"/>
        <source>&amp;Calibrate This Machine…</source>
        <translation>Diese Maschine &amp;kalibrieren…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="332"/>
        <source>&amp;Pin Selection To</source>
        <translation>Auswahl &amp;anheften an</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="334"/>
        <source>Device %1</source>
        <translation>Gerät %1</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="347"/>
        <source>Device %1 (none)</source>
        <translation>Gerät %1 (keines)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="351"/>
        <source>&amp;Run</source>
        <translation>&amp;Ausführen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="352"/>
        <source>&amp;Run the Plan</source>
        <translation>Plan &amp;ausführen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="354"/>
        <source>&amp;Cancel the Run</source>
        <translation>Lauf a&amp;bbrechen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="356"/>
        <source>Run on &amp;Hosts…</source>
        <translation>Auf &amp;Hosts ausführen…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="359"/>
        <source>Main</source>
        <translation>Haupt</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="364"/>
        <source>Planner: </source>
        <translation>Planer: </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="375"/>
        <source>Find node, op or attribute (Ctrl+F)</source>
        <translation>Knoten, Operator oder Attribut suchen (Strg+F)</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="399"/>
        <source>There is no device %1: the palette has %n device(s)</source>
        <translation>
            <numerusform>Es gibt kein Gerät %1: die Palette hat %n Gerät</numerusform>
            <numerusform>Es gibt kein Gerät %1: die Palette hat %n Geräte</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="406"/>
        <source>Select the nodes to pin first</source>
        <translation>Zuerst die anzuheftenden Knoten auswählen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="423"/>
        <source>Select the ops to split first</source>
        <translation>Zuerst die aufzuteilenden Operatoren auswählen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="545"/>
        <source>Calibrate this machine?</source>
        <translation>Diese Maschine kalibrieren?</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="546"/>
        <source>Auto placement predicts each op&apos;s time from the devices&apos; speed. This machine has not been measured yet, so it assumes typical figures. Measure its devices now? It takes a few seconds; Devices ▸ Calibrate does it later.</source>
        <translation>Die automatische Platzierung sagt die Zeit jedes Operators aus der Geschwindigkeit der Geräte vorher. Diese Maschine wurde noch nicht vermessen, daher werden typische Werte angenommen. Ihre Geräte jetzt vermessen? Das dauert einige Sekunden; Geräte ▸ Kalibrieren erledigt es später.</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="559"/>
        <location filename="../app/gui/MainWindow.cpp" line="589"/>
        <location filename="../app/gui/MainWindow.cpp" line="593"/>
        <source>Calibrate</source>
        <translation>Kalibrieren</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="559"/>
        <source>No workspace is open to keep it in.</source>
        <translation>Kein Arbeitsbereich ist geöffnet, um es zu speichern.</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="562"/>
        <source>Measuring this machine&apos;s devices…</source>
        <translation>Die Geräte dieser Maschine werden vermessen…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="589"/>
        <source>Calibration failed: %1</source>
        <translation>Kalibrierung fehlgeschlagen: %1</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="599"/>
        <source>Calibrated %1: auto placement now uses its measured rates</source>
        <translation>%1 kalibriert: die automatische Platzierung nutzt jetzt die gemessenen Werte</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="663"/>
        <source>A run on hosts is already going on</source>
        <translation>Eine Ausführung auf Hosts läuft bereits</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="701"/>
        <source>Ran on %n rank(s): %1 ms median</source>
        <translation>
            <numerusform>Auf %n Rang ausgeführt: %1 ms Median</numerusform>
            <numerusform>Auf %n Rängen ausgeführt: %1 ms Median</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="707"/>
        <source>The run on hosts failed</source>
        <translation>Die Ausführung auf Hosts schlug fehl</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="711"/>
        <source>The run on hosts was cancelled on every rank</source>
        <translation>Die Ausführung auf Hosts wurde auf jedem Rang abgebrochen</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/MainWindow.cpp" line="719"/>
        <source>Starting %n rank(s) with mpirun…</source>
        <translation>
            <numerusform>Starte %n Rang mit mpirun…</numerusform>
            <numerusform>Starte %n Ränge mit mpirun…</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="719"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="721"/>
        <source>Run on Hosts</source>
        <translation>Auf Hosts ausführen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="107"/>
        <source>loading</source>
        <translation>lädt</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="109"/>
        <source>Reading %1…</source>
        <translation>%1 wird gelesen…</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="104"/>
        <location filename="../app/gui/MainWindow.cpp" line="223"/>
        <location filename="../app/gui/MainWindow.cpp" line="227"/>
        <source>%1[*] — Placement Explorer</source>
        <translation>%1[*] — Placement Explorer</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="233"/>
        <source>Saved plan &apos;%1&apos;</source>
        <translation>Plan „%1“ gespeichert</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="212"/>
        <source>Pin %1 to %2</source>
        <translation>%1 auf %2 festlegen</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="451"/>
        <source>No node matches &apos;%1&apos;</source>
        <translation>Kein Knoten passt zu „%1“</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="189"/>
        <source>Bad rule</source>
        <translation>Ungültige Regel</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="265"/>
        <source>Export</source>
        <translation>Exportieren</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="471"/>
        <source>Exported %1</source>
        <translation>%1 exportiert</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="478"/>
        <source>Unsaved plan</source>
        <translation>Ungespeicherter Plan</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="479"/>
        <source>The plan has changes that are not saved. Save them in the workspace?</source>
        <translation>Der Plan hat ungespeicherte Änderungen. Im Arbeitsbereich speichern?</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="526"/>
        <source>Run finished: %1 ms median; predicted %2 ms (%3%4 %)</source>
        <translation>Lauf beendet: %1 ms Median; vorhergesagt %2 ms (%3%4 %)</translation>
    </message>
    <message>
        <location filename="../app/gui/MainWindow.cpp" line="533"/>
        <source>Run finished: %1 ms median</source>
        <translation>Lauf beendet: %1 ms Median</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="32"/>
        <source>Planner mode: demand</source>
        <translation>Planermodus: demand</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="34"/>
        <source>Planner mode: unify</source>
        <translation>Planermodus: unify</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="35"/>
        <source>Auto-place</source>
        <translation>Automatisch platzieren</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="61"/>
        <source>Stream %1 batches</source>
        <translation>%1 Batches streamen</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="63"/>
        <source>Stop streaming</source>
        <translation>Streaming beenden</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="57"/>
        <source>Pipeline in %1 micro-batches</source>
        <translation>Pipeline in %1 Mikro-Batches</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="60"/>
        <source>Stop pipelining</source>
        <translation>Pipeline beenden</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="93"/>
        <source>Change rules</source>
        <translation>Regeln ändern</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="173"/>
        <source>Split %n op(s) across %1</source>
        <translation>
            <numerusform>%n Operator auf %1 aufteilen</numerusform>
            <numerusform>%n Operatoren auf %1 aufteilen</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="186"/>
        <source>Remove split</source>
        <translation>Aufteilung entfernen</translation>
    </message>
    <message>
        <location filename="../app/gui/UndoCommands.cpp" line="192"/>
        <source>Edit devices</source>
        <translation>Geräte bearbeiten</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="214"/>
        <source>Pin %n node(s) to %1</source>
        <translation>
            <numerusform>%n Knoten auf %1 festlegen</numerusform>
            <numerusform>%n Knoten auf %1 festlegen</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/UndoCommands.cpp" line="232"/>
        <source>Clear %n pin(s)</source>
        <translation>
            <numerusform>%n Festlegung entfernen</numerusform>
            <numerusform>%n Festlegungen entfernen</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::gui::ModelOpener</name>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="49"/>
        <location filename="../app/gui/ModelOpener.cpp" line="69"/>
        <source>Cannot open %1</source>
        <translation>%1 kann nicht geöffnet werden</translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="58"/>
        <source>Open a graph</source>
        <translation>Graph öffnen</translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="59"/>
        <source>Graphs (*.relay *.txt *.onnx *.json);;All files (*)</source>
        <translation>Graphen (*.relay *.txt *.onnx *.json);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../app/gui/ModelOpener.cpp" line="83"/>
        <source>Cannot open the example</source>
        <translation>Das Beispiel kann nicht geöffnet werden</translation>
    </message>
</context>
<context>
    <name>placer::gui::PlanBrowser</name>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Plan</source>
        <translation>Plan</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Graph</source>
        <translation>Graph</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Devices</source>
        <translation>Geräte</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="18"/>
        <source>Copies</source>
        <translation>Kopien</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Copied</source>
        <translation>Kopiert</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Last run</source>
        <translation>Letzter Lauf</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="19"/>
        <source>Updated</source>
        <translation>Geändert</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="29"/>
        <source>Open</source>
        <translation>Öffnen</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="30"/>
        <source>Rename…</source>
        <translation>Umbenennen…</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="31"/>
        <source>Duplicate…</source>
        <translation>Duplizieren…</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="32"/>
        <source>Delete…</source>
        <translation>Löschen…</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="33"/>
        <source>Compare</source>
        <translation>Vergleichen</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="44"/>
        <source>Select two plans to compare them.</source>
        <translation>Zwei Pläne zum Vergleichen auswählen.</translation>
    </message>
    <message>
        <location filename="../app/gui/PlanBrowser.cpp" line="48"/>
        <source>Select one plan.</source>
        <translation>Einen Plan auswählen.</translation>
    </message>
</context>
<context>
    <name>placer::gui::RunPanel</name>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="37"/>
        <source>Run</source>
        <translation>Ausführen</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="38"/>
        <source>Cancel</source>
        <translation>Abbrechen</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="43"/>
        <source>Input</source>
        <translation>Eingabe</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="43"/>
        <source>Data</source>
        <translation>Daten</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="46"/>
        <source>Data for each input: a .npy file, a shape such as 2,16,64 for random data at that shape, or nothing for random data at the planned shape. Other shapes are planned for when the run starts.</source>
        <translation>Daten für jede Eingabe: eine .npy-Datei, eine Form wie 2,16,64 für Zufallsdaten dieser Form oder nichts für Zufallsdaten in der geplanten Form. Andere Formen werden beim Start des Laufs eingeplant.</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="53"/>
        <source>.npy…</source>
        <translation>.npy…</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="55"/>
        <source>Choose a .npy file for the selected input</source>
        <translation>Eine .npy-Datei für die ausgewählte Eingabe wählen</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="62"/>
        <source>Data for an input</source>
        <translation>Daten für eine Eingabe</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="63"/>
        <source>NumPy arrays (*.npy)</source>
        <translation>NumPy-Arrays (*.npy)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="81"/>
        <source>Iterations:</source>
        <translation>Durchläufe:</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="79"/>
        <source>Warm-up:</source>
        <translation>Aufwärmen:</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="85"/>
        <source>1 (not pipelined)</source>
        <translation>1 (ohne Pipeline)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="87"/>
        <source>Pipeline the plan: the batch is cut into this many micro-batches that flow through the devices, each device working on one while the next works on the one before. The plan and its predicted timeline follow at once.</source>
        <translation>Den Plan als Pipeline ausführen: der Batch wird in so viele Mikro-Batches geteilt, die durch die Geräte fließen; jedes Gerät arbeitet an einem, während das nächste am vorigen arbeitet. Plan und vorhergesagte Zeitleiste folgen sofort.</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="93"/>
        <source>1 (one batch)</source>
        <translation>1 (ein Batch)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="95"/>
        <source>Throughput mode: this many batches back to back through the pipeline, the next entering the first device while the last drains. The run reports items per second and each batch&apos;s latency.</source>
        <translation>Durchsatzmodus: so viele Batches direkt nacheinander durch die Pipeline; der nächste betritt das erste Gerät, während der letzte abfließt. Der Lauf meldet Elemente pro Sekunde und die Latenz jedes Batches.</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="100"/>
        <source>Stream:</source>
        <translation>Strom:</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="102"/>
        <source>Micro-batches:</source>
        <translation>Mikro-Batches:</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="138"/>
        <source>Export trace…</source>
        <translation>Trace exportieren…</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="139"/>
        <source>Export CSV…</source>
        <translation>CSV exportieren…</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="146"/>
        <source>Export trace</source>
        <translation>Trace exportieren</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="147"/>
        <source>Chrome trace (*.json)</source>
        <translation>Chrome-Trace (*.json)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="149"/>
        <location filename="../app/gui/RunPanel.cpp" line="155"/>
        <source>Export failed</source>
        <translation>Export fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="149"/>
        <location filename="../app/gui/RunPanel.cpp" line="155"/>
        <source>Cannot write %1 (has the plan run?)</source>
        <translation>%1 kann nicht geschrieben werden (wurde der Plan ausgeführt?)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="153"/>
        <source>Export timings</source>
        <translation>Zeiten exportieren</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="153"/>
        <source>CSV (*.csv)</source>
        <translation>CSV (*.csv)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="158"/>
        <source>loading weights %p%</source>
        <translation>Gewichte werden geladen %p%</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="163"/>
        <source>%p%</source>
        <translation>%p%</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="175"/>
        <location filename="../app/gui/RunPanel.cpp" line="233"/>
        <location filename="../app/gui/RunPanel.cpp" line="246"/>
        <source>Cannot run</source>
        <translation>Ausführen nicht möglich</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="190"/>
        <source>&lt;i&gt;Running…&lt;/i&gt;</source>
        <translation>&lt;i&gt;Läuft…&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="210"/>
        <source>Planned as %1</source>
        <translation>Geplant als %1</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="234"/>
        <source>Input %1: %2</source>
        <translation>Eingabe %1: %2</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="247"/>
        <source>Input %1: &apos;%2&apos; is neither a .npy file nor a shape such as 2,16,64</source>
        <translation>Eingabe %1: „%2“ ist weder eine .npy-Datei noch eine Form wie 2,16,64</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="269"/>
        <source>&lt;i&gt;The run was cancelled.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Der Lauf wurde abgebrochen.&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="265"/>
        <source>The run failed</source>
        <translation>Der Lauf ist fehlgeschlagen</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="131"/>
        <source>&lt;i&gt;Runs execute the plan: cpu devices on the host, cuda devices on their GPU where this machine has one, the others on virtual CPUs. Per-node times overlay the graph, the timeline shows each device.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Läufe führen den Plan aus: cpu-Geräte auf dem Host, cuda-Geräte auf ihrer GPU, wo dieser Rechner eine hat, die übrigen auf virtuellen CPUs. Zeiten je Knoten erscheinen im Graphen, die Zeitleiste zeigt jedes Gerät.&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="313"/>
        <source>%1 predicted</source>
        <translation>%1 vorhergesagt</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="389"/>
        <source>µb%1 %2</source>
        <translation>µB%1 %2</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="361"/>
        <source>%1: %2 idle %3 predicted</source>
        <translation>%1: %2 untätig, %3 vorhergesagt</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="369"/>
        <source>waiting</source>
        <translation>wartet</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="370"/>
        <source>bubble (fill)</source>
        <translation>Blase (Füllen)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="371"/>
        <source>bubble</source>
        <translation>Blase</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="375"/>
        <source>bubble (drain)</source>
        <translation>Blase (Leeren)</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="399"/>
        <source>%1 (%2) on %3: %4 predicted%5</source>
        <translation>%1 (%2) auf %3: %4 vorhergesagt%5</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="403"/>
        <source> (from earlier runs)</source>
        <translation> (aus früheren Läufen)</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/RunPanel.cpp" line="503"/>
        <source>&lt;p&gt;&lt;b&gt;Latency&lt;/b&gt; %1 ms median (min %2, max %3) over %n iteration(s)&lt;/p&gt;</source>
        <translation>
            <numerusform>&lt;p&gt;&lt;b&gt;Latenz&lt;/b&gt; %1 ms Median (min. %2, max. %3) über %n Durchlauf&lt;/p&gt;</numerusform>
            <numerusform>&lt;p&gt;&lt;b&gt;Latenz&lt;/b&gt; %1 ms Median (min. %2, max. %3) über %n Durchläufe&lt;/p&gt;</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="513"/>
        <source>&lt;p&gt;&lt;b&gt;Stream&lt;/b&gt; of %1 batches of %2: %3 items/s; a batch&apos;s latency %4 ms (median span in the traced run)%5&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;Strom&lt;/b&gt; von %1 Batches zu %2: %3 Elemente/s; Latenz eines Batches %4 ms (Median der Spannen im aufgezeichneten Lauf)%5&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="520"/>
        <source>; predicted %1 items/s</source>
        <translation>; vorhergesagt %1 Elemente/s</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <location filename="../app/gui/RunPanel.cpp" line="551"/>
        <source>device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <source>runs on</source>
        <translation>läuft auf</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="527"/>
        <source>busy</source>
        <translation>belegt</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="528"/>
        <source>memory</source>
        <translation>Speicher</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="544"/>
        <source>&lt;p&gt;&lt;b&gt;Predicted&lt;/b&gt; %1 ms, measured %2 ms; per device, its busy time and its idle time (in a pipeline, its bubble):&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;Vorhergesagt&lt;/b&gt; %1 ms, gemessen %2 ms; je Gerät seine belegte Zeit und seine Leerlaufzeit (in einer Pipeline ihre Blase):&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="551"/>
        <source>busy, predicted</source>
        <translation>belegt, vorhergesagt</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="552"/>
        <location filename="../app/gui/RunPanel.cpp" line="553"/>
        <source>measured</source>
        <translation>gemessen</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="552"/>
        <source>idle, predicted</source>
        <translation>Leerlauf, vorhergesagt</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="567"/>
        <source>&lt;p&gt;Optimised: %1&lt;/p&gt;</source>
        <translation>&lt;p&gt;Optimiert: %1&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="570"/>
        <source>&lt;p&gt;Note: %1&lt;/p&gt;</source>
        <translation>&lt;p&gt;Hinweis: %1&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="573"/>
        <source>&lt;p&gt;Outputs match the single-device reference (max abs diff %1).&lt;/p&gt;</source>
        <translation>&lt;p&gt;Die Ausgaben stimmen mit der Referenz auf einem Gerät überein (max. abs. Abweichung %1).&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/RunPanel.cpp" line="576"/>
        <source>&lt;p style=&apos;color:#b01010&apos;&gt;Outputs differ from the single-device reference: %1&lt;/p&gt;</source>
        <translation>&lt;p style=&apos;color:#b01010&apos;&gt;Die Ausgaben weichen von der Referenz auf einem Gerät ab: %1&lt;/p&gt;</translation>
    </message>
</context>
<context>
    <name>placer::gui::SplitDialog</name>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="21"/>
        <source>Split Across Devices</source>
        <translation>Auf Geräte aufteilen</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="27"/>
        <source>Run the %n selected op(s) once per device, each device on its share of the batch. The batch is split where the region starts and concatenated where it ends.</source>
        <translation>
            <numerusform>Den %n ausgewählten Operator einmal je Gerät ausführen, jedes Gerät auf seinem Anteil des Batches. Der Batch wird am Anfang des Bereichs aufgeteilt und an seinem Ende verkettet.</numerusform>
            <numerusform>Die %n ausgewählten Operatoren einmal je Gerät ausführen, jedes Gerät auf seinem Anteil des Batches. Der Batch wird am Anfang des Bereichs aufgeteilt und an seinem Ende verkettet.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="33"/>
        <source>Device</source>
        <translation>Gerät</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="34"/>
        <source>Share</source>
        <translation>Anteil</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="47"/>
        <source>Relative share of the batch&apos;s rows</source>
        <translation>Relativer Anteil an den Zeilen des Batches</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="65"/>
        <source>Split</source>
        <translation>Aufteilen</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="94"/>
        <source>Choose two devices or more.</source>
        <translation>Zwei oder mehr Geräte wählen.</translation>
    </message>
    <message>
        <location filename="../app/gui/SplitDialog.cpp" line="112"/>
        <source>%1: rows %2–%3</source>
        <translation>%1: Zeilen %2–%3</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="117"/>
        <source>Batch of %1 across %n op(s): %2.</source>
        <translation>
            <numerusform>Batch von %1 über %n Operator: %2.</numerusform>
            <numerusform>Batch von %1 über %n Operatoren: %2.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/SplitDialog.cpp" line="123"/>
        <source>%n conflict(s); the first: %1</source>
        <translation>
            <numerusform>%n Konflikt; der erste: %1</numerusform>
            <numerusform>%n Konflikte; der erste: %1</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::gui::WorkspaceController</name>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="49"/>
        <source>Rename plan</source>
        <translation>Plan umbenennen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="49"/>
        <source>New name:</source>
        <translation>Neuer Name:</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="57"/>
        <source>Duplicate plan</source>
        <translation>Plan duplizieren</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="57"/>
        <source>Name of the copy:</source>
        <translation>Name der Kopie:</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="58"/>
        <source> copy</source>
        <translation> Kopie</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="63"/>
        <source>Delete plan</source>
        <translation>Plan löschen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="64"/>
        <source>Delete the plan &apos;%1&apos; and its runs?</source>
        <translation>Den Plan „%1“ und seine Läufe löschen?</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="70"/>
        <source>Compare plans</source>
        <translation>Pläne vergleichen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="94"/>
        <location filename="../app/gui/WorkspaceController.cpp" line="116"/>
        <source>Cannot keep a draft of the unsaved changes</source>
        <translation>Kein Entwurf der ungesicherten Änderungen möglich</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="145"/>
        <source>Cannot drop the draft of the unsaved changes</source>
        <translation>Der Entwurf der ungesicherten Änderungen lässt sich nicht verwerfen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="168"/>
        <source>Unsaved changes</source>
        <translation>Ungesicherte Änderungen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="166"/>
        <source>Restore the unsaved changes to %1 from %2?</source>
        <translation>Die ungesicherten Änderungen an %1 von %2 wiederherstellen?</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="164"/>
        <source>Restore the unsaved plan of %1 from %2?</source>
        <translation>Den ungesicherten Plan von %1 von %2 wiederherstellen?</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/WorkspaceController.cpp" line="172"/>
        <source>Placement Explorer did not close cleanly; these changes were kept as a draft in the workspace (%1 on %2, %n cop(ies)).</source>
        <translation>
            <numerusform>Placement Explorer wurde nicht sauber beendet; diese Änderungen wurden als Entwurf im Arbeitsbereich aufbewahrt (%1 auf %2, %n Kopie).</numerusform>
            <numerusform>Placement Explorer wurde nicht sauber beendet; diese Änderungen wurden als Entwurf im Arbeitsbereich aufbewahrt (%1 auf %2, %n Kopien).</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="176"/>
        <source>Restore</source>
        <translation>Wiederherstellen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="177"/>
        <source>Discard</source>
        <translation>Verwerfen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="182"/>
        <source>Cannot discard the draft</source>
        <translation>Der Entwurf lässt sich nicht verwerfen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="188"/>
        <source>Cannot restore the draft</source>
        <translation>Der Entwurf lässt sich nicht wiederherstellen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="200"/>
        <source>Cannot take over the draft</source>
        <translation>Der Entwurf lässt sich nicht übernehmen</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="232"/>
        <source>Workspace: %1 (read-only; unsaved changes kept in %2)</source>
        <translation>Arbeitsbereich: %1 (schreibgeschützt; ungesicherte Änderungen in %2)</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="233"/>
        <source>nowhere</source>
        <translation>nirgends</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="234"/>
        <source>The workspace is read-only</source>
        <translation>Der Arbeitsbereich ist schreibgeschützt</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="236"/>
        <source>%1 cannot be written: its plans can be opened, but saving them fails. Unsaved changes are kept as drafts in the temporary workspace %2; open another workspace (File ▸ Open Workspace) to save.</source>
        <translation>%1 kann nicht geschrieben werden: seine Pläne lassen sich öffnen, aber nicht speichern. Ungesicherte Änderungen werden als Entwürfe im temporären Arbeitsbereich %2 aufbewahrt; zum Speichern einen anderen Arbeitsbereich öffnen (Datei ▸ Arbeitsbereich öffnen).</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="241"/>
        <source>%1 cannot be written, and no temporary workspace could be made for drafts (%2): unsaved changes are not kept.</source>
        <translation>%1 kann nicht geschrieben werden, und für Entwürfe ließ sich kein temporärer Arbeitsbereich anlegen (%2): ungesicherte Änderungen werden nicht aufbewahrt.</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="245"/>
        <source>Workspace: %1</source>
        <translation>Arbeitsbereich: %1</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="254"/>
        <location filename="../app/gui/WorkspaceController.cpp" line="263"/>
        <source>Cannot save the plan</source>
        <translation>Der Plan kann nicht gespeichert werden</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="255"/>
        <source>No workspace is open (File ▸ Open Workspace).</source>
        <translation>Kein Arbeitsbereich ist geöffnet (Datei ▸ Arbeitsbereich öffnen).</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="281"/>
        <source>Save plan</source>
        <translation>Plan speichern</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="281"/>
        <source>Plan name:</source>
        <translation>Planname:</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="291"/>
        <source>Workspace</source>
        <translation>Arbeitsbereich</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="291"/>
        <source>Workspaces (*.db);;All files (*)</source>
        <translation>Arbeitsbereiche (*.db);;Alle Dateien (*)</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="302"/>
        <source>Cannot open the plan</source>
        <translation>Der Plan kann nicht geöffnet werden</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="307"/>
        <source>plan %1</source>
        <translation>Plan %1</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="317"/>
        <source>The planner answers differently now</source>
        <translation>Der Planer antwortet jetzt anders</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="318"/>
        <source>Since &apos;%1&apos; was saved, the planner&apos;s answer changed:
%2</source>
        <translation>Seit „%1“ gespeichert wurde, hat sich die Antwort des Planers geändert:
%2</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="328"/>
        <source>Cannot rename the plan</source>
        <translation>Der Plan kann nicht umbenannt werden</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="344"/>
        <source>Cannot duplicate the plan</source>
        <translation>Der Plan kann nicht dupliziert werden</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="357"/>
        <source>Cannot delete the plan</source>
        <translation>Der Plan kann nicht gelöscht werden</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="374"/>
        <source>&lt;h3&gt;%1 → %2&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;%1 → %2&lt;/h3&gt;</translation>
    </message>
    <message numerus="yes">
        <location filename="../app/gui/WorkspaceController.cpp" line="375"/>
        <source>&lt;p&gt;%n node(s) moved; </source>
        <translation>
            <numerusform>&lt;p&gt;%n Knoten verschoben; </numerusform>
            <numerusform>&lt;p&gt;%n Knoten verschoben; </numerusform>
        </translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="376"/>
        <source>copies: %1 added, %2 removed; bytes copied %3 → %4.&lt;/p&gt;</source>
        <translation>Kopien: %1 hinzu, %2 entfallen; kopierte Bytes %3 → %4.&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="385"/>
        <source>&lt;p&gt;Last runs: %1 ms → %2 ms (%3 on %4, %5 on %6)&lt;/p&gt;</source>
        <translation>&lt;p&gt;Letzte Läufe: %1 ms → %2 ms (%3 auf %4, %5 auf %6)&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="392"/>
        <source> ms</source>
        <translation> ms</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="392"/>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="394"/>
        <source>&lt;p&gt;Predicted: %1 → %2; measured: %3 ms → %4 ms&lt;/p&gt;</source>
        <translation>&lt;p&gt;Vorhergesagt: %1 → %2; gemessen: %3 ms → %4 ms&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="400"/>
        <source>&lt;p&gt;&lt;b&gt;Largest changes in node time&lt;/b&gt;&lt;br&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;Größte Änderungen der Knotenzeiten&lt;/b&gt;&lt;br&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="409"/>
        <source>&lt;p&gt;Run both plans to compare their latency.&lt;/p&gt;</source>
        <translation>&lt;p&gt;Beide Pläne ausführen, um ihre Latenz zu vergleichen.&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="418"/>
        <source>… and %1 more</source>
        <translation>… und %1 weitere</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="421"/>
        <source>Moved</source>
        <translation>Verschoben</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="422"/>
        <source>Copies added</source>
        <translation>Neue Kopien</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="423"/>
        <source>Copies removed</source>
        <translation>Entfallene Kopien</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="432"/>
        <source>Cannot keep the run&apos;s node times</source>
        <translation>Die Knotenzeiten des Laufs können nicht gespeichert werden</translation>
    </message>
    <message>
        <location filename="../app/gui/WorkspaceController.cpp" line="438"/>
        <source>Cannot record the run</source>
        <translation>Der Lauf kann nicht aufgezeichnet werden</translation>
    </message>
</context>
<context>
    <name>placer::views::ConflictsPanel</name>
    <message>
        <location filename="../views/ConflictsPanel.cpp" line="33"/>
        <source>No conflicts.</source>
        <translation>Keine Konflikte.</translation>
    </message>
    <message>
        <location filename="../views/ConflictsPanel.cpp" line="36"/>
        <source>Note: %1</source>
        <translation>Hinweis: %1</translation>
    </message>
</context>
<context>
    <name>placer::views::DeviceChip</name>
    <message>
        <location filename="../views/DevicePalette.cpp" line="31"/>
        <source>Drag onto a node, or onto a selected node to place the whole selection, to run it on %1</source>
        <translation>Auf einen Knoten ziehen – oder auf einen ausgewählten Knoten für die ganze Auswahl –, um ihn auf %1 auszuführen</translation>
    </message>
</context>
<context>
    <name>placer::views::DevicePalette</name>
    <message>
        <location filename="../views/DevicePalette.cpp" line="129"/>
        <source>default</source>
        <translation>Standard</translation>
    </message>
    <message>
        <location filename="../views/DevicePalette.cpp" line="131"/>
        <source>host</source>
        <translation>Host</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/DevicePalette.cpp" line="141"/>
        <source>%n node(s)</source>
        <translation>
            <numerusform>%n Knoten</numerusform>
            <numerusform>%n Knoten</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>placer::views::GraphScene</name>
    <message>
        <location filename="../views/GraphScene.cpp" line="394"/>
        <source>Runs as one op on its device; body collapsed:</source>
        <translation>Läuft als ein Operator auf seinem Gerät; Rumpf eingeklappt:</translation>
    </message>
    <message>
        <location filename="../views/GraphScene.cpp" line="568"/>
        <source>size at run time</source>
        <translation>Größe zur Laufzeit</translation>
    </message>
</context>
<context>
    <name>placer::views::HintBar</name>
    <message>
        <location filename="../views/HintBar.cpp" line="23"/>
        <source>Hide this hint</source>
        <translation>Diesen Hinweis ausblenden</translation>
    </message>
</context>
<context>
    <name>placer::views::LayoutController</name>
    <message>
        <location filename="../views/LayoutController.cpp" line="25"/>
        <source>Cancel layout</source>
        <translation>Layout abbrechen</translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="28"/>
        <source>laying out</source>
        <translation>Layout läuft</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/LayoutController.cpp" line="55"/>
        <source>%n name scope(s) shown collapsed: double-click a group to open it; Find opens the groups a node is in</source>
        <translation>
            <numerusform>%n Namensbereich eingeklappt gezeigt: Doppelklick auf eine Gruppe öffnet sie; Suchen öffnet die Gruppen eines Knotens</numerusform>
            <numerusform>%n Namensbereiche eingeklappt gezeigt: Doppelklick auf eine Gruppe öffnet sie; Suchen öffnet die Gruppen eines Knotens</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../views/LayoutController.cpp" line="73"/>
        <source>Showing a quick layout while Graphviz lays out %n node(s)…</source>
        <translation>
            <numerusform>Ein schnelles Layout wird gezeigt, während Graphviz %n Knoten anordnet…</numerusform>
            <numerusform>Ein schnelles Layout wird gezeigt, während Graphviz %n Knoten anordnet…</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="139"/>
        <source>Layout failed (%1); showing a simple ranked layout</source>
        <translation>Layout fehlgeschlagen (%1); ein einfaches Ebenenlayout wird gezeigt</translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="142"/>
        <source>Laid out in %1 s (%2 of %3 levels; the others were kept from before)</source>
        <translation>Layout in %1 s (%2 von %3 Ebenen; die übrigen von vorher übernommen)</translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="148"/>
        <source>Laid out in %1 s</source>
        <translation>Layout in %1 s</translation>
    </message>
    <message>
        <location filename="../views/LayoutController.cpp" line="184"/>
        <source>Layout cancelled; showing a simple ranked layout</source>
        <translation>Layout abgebrochen; ein einfaches Ebenenlayout wird gezeigt</translation>
    </message>
</context>
<context>
    <name>placer::views::ModeBox</name>
    <message>
        <location filename="../views/ModeBox.cpp" line="10"/>
        <source>demand</source>
        <translation>demand</translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="11"/>
        <source>unify (TVM)</source>
        <translation>unify (TVM)</translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="12"/>
        <source>auto-place</source>
        <translation>automatisch</translation>
    </message>
    <message>
        <location filename="../views/ModeBox.cpp" line="13"/>
        <source>demand: unpinned nodes go where their consumers are; unify: nodes joined by hard edges share a device, as in TVM; auto-place: unpinned ops go where the cost model predicts the shortest latency, pins and rules kept</source>
        <translation>demand: nicht festgelegte Knoten gehen dorthin, wo ihre Verbraucher sind; unify: durch harte Kanten verbundene Knoten teilen sich ein Gerät, wie in TVM; automatisch: nicht festgelegte Operatoren gehen dorthin, wo das Kostenmodell die kürzeste Latenz vorhersagt, Festlegungen und Regeln bleiben</translation>
    </message>
</context>
<context>
    <name>placer::views::PlacementDocument</name>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="211"/>
        <source>&apos;%1&apos; cannot be removed: device_copy %2 in the model names it</source>
        <translation>„%1“ kann nicht entfernt werden: device_copy %2 im Modell nennt es</translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="220"/>
        <source>&apos;%1&apos; cannot be removed: a result of the model must be on it</source>
        <translation>„%1“ kann nicht entfernt werden: ein Ergebnis des Modells muss dort liegen</translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="230"/>
        <source>devices named by device_copy nodes must keep their place in the list</source>
        <translation>von device_copy-Knoten genannte Geräte müssen ihren Platz in der Liste behalten</translation>
    </message>
    <message>
        <location filename="../views/PlacementDocument.cpp" line="237"/>
        <source>devices that results must be on must keep their place in the list</source>
        <translation>Geräte, auf denen Ergebnisse liegen müssen, müssen ihren Platz in der Liste behalten</translation>
    </message>
</context>
<context>
    <name>placer::views::PropertiesPanel</name>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="34"/>
        <source>&lt;i&gt;Select a node to see its properties and why it runs where it does.&lt;/i&gt;</source>
        <translation>&lt;i&gt;Einen Knoten auswählen, um seine Eigenschaften zu sehen und warum er dort läuft.&lt;/i&gt;</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PropertiesPanel.cpp" line="36"/>
        <source>%n node(s) selected.</source>
        <translation>
            <numerusform>%n Knoten ausgewählt.</numerusform>
            <numerusform>%n Knoten ausgewählt.</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="54"/>
        <source>Devices:</source>
        <translation>Geräte:</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="55"/>
        <source>Shards:</source>
        <translation>Teile:</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="59"/>
        <source>%1: rows %2–%3 of %4</source>
        <translation>%1: Zeilen %2–%3 von %4</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="68"/>
        <source>, predicted %1</source>
        <translation>, vorhergesagt %1</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="75"/>
        <source>Device:</source>
        <translation>Gerät:</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="75"/>
        <source>none</source>
        <translation>keine</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="78"/>
        <source>Why:</source>
        <translation>Warum:</translation>
    </message>
    <message numerus="yes">
        <location filename="../views/PropertiesPanel.cpp" line="86"/>
        <source>… %n more</source>
        <translation>
            <numerusform>… %n weiterer</numerusform>
            <numerusform>… %n weitere</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="94"/>
        <source>Decided by:</source>
        <translation>Entschieden durch:</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="98"/>
        <source>Pinned:</source>
        <translation>Festgelegt:</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="103"/>
        <source>Predicted:</source>
        <translation>Vorhergesagt:</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="103"/>
        <source>from</source>
        <translation>von</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="106"/>
        <source> (from earlier runs)</source>
        <translation> (aus früheren Läufen)</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="107"/>
        <source> (roofline estimate)</source>
        <translation> (Roofline-Schätzung)</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="109"/>
        <source>Inputs:</source>
        <translation>Eingänge:</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="114"/>
        <source>Outputs:</source>
        <translation>Ausgänge:</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="121"/>
        <source>Bodies (collapsed; they run on this node&apos;s device):</source>
        <translation>Rümpfe (eingeklappt; sie laufen auf dem Gerät dieses Knotens):</translation>
    </message>
    <message>
        <location filename="../views/PropertiesPanel.cpp" line="128"/>
        <source>Attributes:</source>
        <translation>Attribute:</translation>
    </message>
</context>
<context>
    <name>placer::views::RulesPanel</name>
    <message>
        <location filename="../views/RulesPanel.cpp" line="21"/>
        <source>Apply rules</source>
        <translation>Regeln anwenden</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="25"/>
        <source>Op-name rules, one OP=DEVICE a line (globs, first match wins):</source>
        <translation>Regeln nach Operatorname, eine OP=GERÄT pro Zeile (Muster, der erste Treffer gilt):</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="29"/>
        <source>Fallback device:</source>
        <translation>Ausweichgerät:</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="64"/>
        <source>(none)</source>
        <translation>(keines)</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="89"/>
        <source>&apos;%1&apos; is not of the form OP=DEVICE</source>
        <translation>„%1“ hat nicht die Form OP=GERÄT</translation>
    </message>
    <message>
        <location filename="../views/RulesPanel.cpp" line="96"/>
        <source>&apos;%1&apos; names unknown device &apos;%2&apos;</source>
        <translation>„%1“ nennt das unbekannte Gerät „%2“</translation>
    </message>
</context>
<context>
    <name>placer::views::TimelineWidget</name>
    <message>
        <location filename="../views/TimelineWidget.cpp" line="102"/>
        <source>Run the plan (Run ▸ Run) to see when each device works.</source>
        <translation>Den Plan ausführen (Ausführen ▸ Ausführen), um zu sehen, wann jedes Gerät arbeitet.</translation>
    </message>
</context>
</TS>
