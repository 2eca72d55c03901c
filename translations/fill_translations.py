#!/usr/bin/env python3
"""Fills translations/placement_explorer_{de,zh_CN}.ts from the tables below, and the plurals of
placement_explorer_en.ts.

Run after `cmake --build build --target update_translations` has added new source strings;
strings without an entry here stay unfinished (shown in English).
"""
import os
import sys
import xml.etree.ElementTree as ET

# source text -> (German, Simplified Chinese). Plural forms: a tuple of forms per language.
T = {
    # Shapes in the dimensions a model's inputs name.
    "(sizes at %1)": ("(Größen bei %1)", "（尺寸按 %1）"),
    "predicted latency at %2: %1": ("vorhergesagte Latenz bei %2: %1", "按 %2 预测的延迟：%1"),
    # Sharding inside ops (--shard).
    "Shard the ops NODES=DEV[:SHARE],... inside, their weights cut across the devices (repeatable).": (
        "Die Operatoren KNOTEN=GERÄT[:ANTEIL],... im Inneren aufteilen, ihre Gewichte über die Geräte geschnitten (wiederholbar).",
        "在算子内部切分 NODES=DEV[:SHARE],...，其权重分布到各设备（可重复）。"),
    # Pipelines (--micro-batches).
    "pipelined in %n micro-batch(es)": (
        ("in %n Mikro-Batch gepipelinet", "in %n Mikro-Batches gepipelinet"),
        ("以 %n 个微批次流水线执行",)),
    "Micro-batches:": ("Mikro-Batches:", "微批次："),
    "1 (not pipelined)": ("1 (ohne Pipeline)", "1（不使用流水线）"),
    "Pipeline the plan: the batch is cut into this many micro-batches that flow through the devices, each device working on one while the next works on the one before. The plan and its predicted timeline follow at once.": (
        "Den Plan als Pipeline ausführen: der Batch wird in so viele Mikro-Batches geteilt, die durch die Geräte fließen; jedes Gerät arbeitet an einem, während das nächste am vorigen arbeitet. Plan und vorhergesagte Zeitleiste folgen sofort.",
        "以流水线执行计划：批次被切分为这么多个微批次依次流经各设备，每个设备处理一个微批次的同时，下一个设备处理前一个。计划及其预测时间线立即随之更新。"),
    "µb%1 %2": ("µB%1 %2", "微批%1 %2"),
    # Throughput mode (--stream).
    "a stream of %n batch(es)": (
        ("ein Strom von %n Batch", "ein Strom von %n Batches"),
        ("%n 个批次的流",)),
    "Stream:": ("Strom:", "流："),
    "<p><b>Predicted</b> %1 ms, measured %2 ms; per device, its busy time and its idle time (in a pipeline, its bubble):</p>": (
        "<p><b>Vorhergesagt</b> %1 ms, gemessen %2 ms; je Gerät seine belegte Zeit und seine Leerlaufzeit (in einer Pipeline ihre Blase):</p>",
        "<p><b>预测</b> %1 ms，实测 %2 ms；每个设备的忙碌时间和空闲时间（在流水线中即其气泡）：</p>"),
    "busy, predicted": ("belegt, vorhergesagt", "忙碌，预测"),
    "idle, predicted": ("Leerlauf, vorhergesagt", "空闲，预测"),
    "1 (one batch)": ("1 (ein Batch)", "1（一个批次）"),
    "Throughput mode: this many batches back to back through the pipeline, the next entering the first device while the last drains. The run reports items per second and each batch's latency.": (
        "Durchsatzmodus: so viele Batches direkt nacheinander durch die Pipeline; der nächste betritt das erste Gerät, während der letzte abfließt. Der Lauf meldet Elemente pro Sekunde und die Latenz jedes Batches.",
        "吞吐模式：这么多个批次首尾相接地流经流水线，下一个批次进入第一个设备时上一个正在排空。运行报告每秒处理的条目数和每个批次的延迟。"),
    "<p><b>Stream</b> of %1 batches of %2: %3 items/s; a batch's latency %4 ms (median span in the traced run)%5</p>": (
        "<p><b>Strom</b> von %1 Batches zu %2: %3 Elemente/s; Latenz eines Batches %4 ms (Median der Spannen im aufgezeichneten Lauf)%5</p>",
        "<p><b>流</b>：%1 个批次，每批 %2：每秒 %3 个条目；单个批次的延迟 %4 ms（记录运行中跨度的中位数）%5</p>"),
    "; predicted %1 items/s": ("; vorhergesagt %1 Elemente/s", "；预测每秒 %1 个条目"),
    "Stream %1 batches": ("%1 Batches streamen", "流式执行 %1 个批次"),
    "Stop streaming": ("Streaming beenden", "停止流式执行"),
    "Throughput mode: N batches back to back through the pipeline.": (
        "Durchsatzmodus: N Batches direkt nacheinander durch die Pipeline.",
        "吞吐模式：N 个批次首尾相接地流经流水线。"),
    ", micro-batch %1": (", Mikro-Batch %1", "，微批次 %1"),
    # Drafts (autosave and recovery).
    "Restored the unsaved changes": ("Die ungesicherten Änderungen wurden wiederhergestellt", "已恢复未保存的更改"),
    "Cannot keep a draft of the unsaved changes": (
        "Kein Entwurf der ungesicherten Änderungen möglich", "无法保存未保存更改的草稿"),
    "Cannot drop the draft of the unsaved changes": (
        "Der Entwurf der ungesicherten Änderungen lässt sich nicht verwerfen", "无法删除未保存更改的草稿"),
    "Restore the unsaved plan of %1 from %2?": (
        "Den ungesicherten Plan von %1 von %2 wiederherstellen?", "恢复 %2 时 %1 的未保存计划？"),
    "Unsaved changes": ("Ungesicherte Änderungen", "未保存的更改"),
    "Restore the unsaved changes to %1 from %2?": (
        "Die ungesicherten Änderungen an %1 von %2 wiederherstellen?", "恢复 %2 时对 %1 所做的未保存更改？"),
    "Placement Explorer did not close cleanly; these changes were kept as a draft in the workspace (%1 on %2, %n cop(ies)).": (
        ("Placement Explorer wurde nicht sauber beendet; diese Änderungen wurden als Entwurf im Arbeitsbereich aufbewahrt (%1 auf %2, %n Kopie).",
         "Placement Explorer wurde nicht sauber beendet; diese Änderungen wurden als Entwurf im Arbeitsbereich aufbewahrt (%1 auf %2, %n Kopien)."),
        ("Placement Explorer 未正常关闭；这些更改已作为草稿保存在工作区中（%1 位于 %2，%n 次复制）。",)),
    "Restore": ("Wiederherstellen", "恢复"),
    "Discard": ("Verwerfen", "放弃"),
    "Cannot discard the draft": ("Der Entwurf lässt sich nicht verwerfen", "无法放弃草稿"),
    "Cannot restore the draft": ("Der Entwurf lässt sich nicht wiederherstellen", "无法恢复草稿"),
    "Cannot take over the draft": ("Der Entwurf lässt sich nicht übernehmen", "无法接管草稿"),
    "Workspace: %1 (read-only; unsaved changes kept in %2)": (
        "Arbeitsbereich: %1 (schreibgeschützt; ungesicherte Änderungen in %2)",
        "工作区：%1（只读；未保存的更改保存在 %2）"),
    "nowhere": ("nirgends", "无处"),
    "The workspace is read-only": ("Der Arbeitsbereich ist schreibgeschützt", "工作区为只读"),
    "%1 cannot be written: its plans can be opened, but saving them fails. Unsaved changes are kept as drafts in the temporary workspace %2; open another workspace (File ▸ Open Workspace) to save.": (
        "%1 kann nicht geschrieben werden: seine Pläne lassen sich öffnen, aber nicht speichern. Ungesicherte Änderungen werden als Entwürfe im temporären Arbeitsbereich %2 aufbewahrt; zum Speichern einen anderen Arbeitsbereich öffnen (Datei ▸ Arbeitsbereich öffnen).",
        "%1 无法写入：其中的计划可以打开，但无法保存。未保存的更改作为草稿保存在临时工作区 %2 中；要保存，请打开另一个工作区（文件 ▸ 打开工作区）。"),
    "%1 cannot be written, and no temporary workspace could be made for drafts (%2): unsaved changes are not kept.": (
        "%1 kann nicht geschrieben werden, und für Entwürfe ließ sich kein temporärer Arbeitsbereich anlegen (%2): ungesicherte Änderungen werden nicht aufbewahrt.",
        "%1 无法写入，且无法为草稿创建临时工作区（%2）：未保存的更改不会被保留。"),
    "Pipeline in %1 micro-batches": ("Pipeline in %1 Mikro-Batches", "以 %1 个微批次流水线执行"),
    "Stop pipelining": ("Pipeline beenden", "停止流水线执行"),
    "%1: %2 idle %3 predicted": ("%1: %2 untätig, %3 vorhergesagt", "%1：%2 空闲 %3（预测）"),
    "waiting": ("wartet", "等待"),
    "bubble (fill)": ("Blase (Füllen)", "气泡（填充）"),
    "bubble": ("Blase", "气泡"),
    "bubble (drain)": ("Blase (Leeren)", "气泡（排空）"),
    "Pipeline the plan in M micro-batches of the batch.": (
        "Den Plan in M Mikro-Batches des Batches als Pipeline ausführen.",
        "将批次切分为 M 个微批次，以流水线执行计划。"),
    # Splitting a region across devices on the batch axis.
    "split ⇉ %1": ("Aufteilung ⇉ %1", "拆分 ⇉ %1"),
    "concat ⇇": ("Verkettung ⇇", "拼接 ⇇"),
    "Split Across Devices…": ("Auf Geräte aufteilen…", "跨设备拆分…"),
    "Remove Split": ("Aufteilung entfernen", "移除拆分"),
    "%n region(s) split": (("%n Bereich aufgeteilt", "%n Bereiche aufgeteilt"), ("拆分了 %n 个区域",)),
    "%n name scope(s) shown collapsed: double-click a group to open it; Find opens the groups a node is in": (("%n Namensbereich eingeklappt gezeigt: Doppelklick auf eine Gruppe öffnet sie; Suchen öffnet die Gruppen eines Knotens", "%n Namensbereiche eingeklappt gezeigt: Doppelklick auf eine Gruppe öffnet sie; Suchen öffnet die Gruppen eines Knotens"), ("%n 个名称作用域已折叠显示：双击分组可展开；查找会展开节点所在的分组",)),
    "Split NODES=DEV[:SHARE],... on the batch (repeatable).": (
        "KNOTEN=GERÄT[:ANTEIL],... auf dem Batch aufteilen (wiederholbar).",
        "按批次拆分 NODES=DEV[:SHARE],...（可重复）。"),
    "Planner mode: demand, unify or auto.": (
        "Planermodus: demand, unify oder auto.", "规划模式：demand、unify 或 auto。"),
    "&Split Across Devices…": ("Auf Geräte &aufteilen…", "跨设备拆分(&S)…"),
    "Remove Split of Selection": ("Aufteilung der Auswahl entfernen", "移除所选内容的拆分"),
    "copy %1, %2 → %3, %4 bytes: %5 ms": ("Kopie %1, %2 → %3, %4 Bytes: %5 ms", "复制 %1，%2 → %3，%4 字节：%5 ms"),
    "Run the plan under mpirun on N ranks of this machine before the screenshot, the devices on the ranks Run ▸ Run on Hosts proposes.": (
        "Den Plan vor dem Bildschirmfoto mit mpirun auf N Rängen dieses Rechners ausführen, die Geräte auf den Rängen, die Ausführen ▸ Auf Hosts ausführen vorschlägt.",
        "截图前用 mpirun 在本机的 N 个进程（rank）上运行计划，设备放在“运行 ▸ 在多台主机上运行”建议的 rank 上。"),
    "Run on Hosts": ("Auf Hosts ausführen", "在多台主机上运行"),
    "The plan runs under mpirun: one placer process (rank) per slot, each virtual device on the rank and physical device chosen below. Copies between ranks go over MPI. The model file must be readable at the same path on every host.": (
        "Der Plan läuft unter mpirun: ein placer-Prozess (Rang) je Slot, jedes virtuelle Gerät auf dem unten gewählten Rang und physischen Gerät. Kopien zwischen Rängen laufen über MPI. Die Modelldatei muss auf jedem Host unter demselben Pfad lesbar sein.",
        "计划在 mpirun 下运行：每个槽位一个 placer 进程（rank），每个虚拟设备运行在下面选定的 rank 和物理设备上。rank 之间的复制经由 MPI。模型文件必须在每台主机的同一路径下可读。"),
    "This machine": ("Dieser Rechner", "本机"),
    "Hosts in a file": ("Hosts aus einer Datei", "文件中的主机"),
    # The host file read as it is chosen.
    "Cannot read the host file %1: %2": ("Die Hostdatei %1 ist nicht lesbar: %2", "无法读取主机文件 %1：%2"),
    "%1, line %2: %3": ("%1, Zeile %2: %3", "%1，第 %2 行：%3"),
    "the line starts with \"%1\", not a host name": ("die Zeile beginnt mit „%1“, nicht mit einem Hostnamen", "该行以“%1”开头，而不是主机名"),
    "\"%1\" is not slots=N or max_slots=N": ("„%1“ ist weder slots=N noch max_slots=N", "“%1”不是 slots=N 或 max_slots=N"),
    "\"%1\" is not a number of slots (1 or more)": ("„%1“ ist keine Anzahl von Slots (1 oder mehr)", "“%1”不是槽位数（1 或以上）"),
    "%1 names no host": ("%1 nennt keinen Host", "%1 未列出任何主机"),
    "%1 is not a host file (not a regular file of at most 1 MiB)": ("%1 ist keine Hostdatei (keine gewöhnliche Datei von höchstens 1 MiB)", "%1 不是主机文件（不是不超过 1 MiB 的普通文件）"),
    "Host": ("Host", "主机"),
    "Every rank on this machine (%1).": ("Jeder Rang auf diesem Rechner (%1).", "所有 rank 都在本机（%1）。"),
    "Choose a host file.": ("Wählen Sie eine Hostdatei.", "请选择主机文件。"),
    "%1 (%n slot(s))": (("%1 (%n Slot)", "%1 (%n Slots)"), ("%1（%n 个槽位）",)),
    "%1 (a slot per core)": ("%1 (ein Slot je Kern)", "%1（每个核心一个槽位）"),
    "%n host(s): %1.": (("%n Host: %1.", "%n Hosts: %1."), ("%n 台主机：%1。",)),
    "%1 ranks on %2 slots: mpirun starts more than one rank on a slot.": ("%1 Ränge auf %2 Slots: mpirun startet mehr als einen Rang je Slot.", "%1 个 rank 对应 %2 个槽位：mpirun 会在一个槽位上启动多个 rank。"),
    "chosen by mpirun": ("wählt mpirun", "由 mpirun 决定"),
    "an Open MPI host file: one host a line, slots=N": ("eine Open-MPI-Hostdatei: ein Host je Zeile, slots=N", "Open MPI 主机文件：每行一台主机，slots=N"),
    "Browse…": ("Durchsuchen…", "浏览…"),
    "Host file": ("Hostdatei", "主机文件"),
    "Ranks:": ("Ränge:", "rank 数："),
    "Rank": ("Rang", "rank"),
    "Physical device there": ("Physisches Gerät dort", "该处的物理设备"),
    "<b>Latency</b> %1 ms median (min %2, max %3) over %4 iterations, on %n rank(s)": (
        ("<b>Latenz</b> %1 ms Median (min %2, max %3) über %4 Iterationen, auf %n Rang",
         "<b>Latenz</b> %1 ms Median (min %2, max %3) über %4 Iterationen, auf %n Rängen"),
        ("<b>延迟</b> 中位数 %1 ms（最小 %2，最大 %3），%4 次迭代，%n 个 rank",)),
    "Rank %1 (%2) → rank %3 (%4): %5 copies, %6 bytes, %7 ms<br>": (
        "Rang %1 (%2) → Rang %3 (%4): %5 Kopien, %6 Bytes, %7 ms<br>",
        "rank %1（%2）→ rank %3（%4）：%5 次复制，%6 字节，%7 ms<br>"),
    "Outputs not checked against a reference.": ("Ausgaben nicht mit einer Referenz verglichen.", "输出未与参考结果比对。"),
    "Outputs match the single-device reference (max abs diff %1).": (
        "Die Ausgaben stimmen mit der Ein-Geräte-Referenz überein (max. abs. Abweichung %1).",
        "输出与单设备参考结果一致（最大绝对差 %1）。"),
    "<b>Outputs differ from the single-device reference</b>: %1": (
        "<b>Die Ausgaben weichen von der Ein-Geräte-Referenz ab</b>: %1",
        "<b>输出与单设备参考结果不一致</b>：%1"),
    "A run on hosts is already going on.": ("Eine Ausführung auf Hosts läuft bereits.", "已有一次多主机运行正在进行。"),
    "A run on hosts is already going on": ("Eine Ausführung auf Hosts läuft bereits", "已有一次多主机运行正在进行"),
    "Cannot make a folder for the run's report: %1": ("Kein Ordner für den Bericht der Ausführung: %1", "无法为运行报告创建文件夹：%1"),
    "Cannot start %1: %2 (is Open MPI installed?)": ("%1 lässt sich nicht starten: %2 (ist Open MPI installiert?)", "无法启动 %1：%2（是否已安装 Open MPI？）"),
    "mpirun ended with status %1:\n%2": ("mpirun endete mit Status %1:\n%2", "mpirun 以状态 %1 结束：\n%2"),
    "the run wrote no %1": ("die Ausführung schrieb kein %1", "运行未写出 %1"),
    "The run on hosts ended, but %1.\n%2": ("Die Ausführung auf Hosts endete, aber %1.\n%2", "多主机运行已结束，但%1。\n%2"),
    "Run on &Hosts…": ("Auf &Hosts ausführen…", "在多台主机上运行(&H)…"),
    "Ran on %n rank(s): %1 ms median": (
        ("Auf %n Rang ausgeführt: %1 ms Median", "Auf %n Rängen ausgeführt: %1 ms Median"),
        ("在 %n 个 rank 上运行：中位数 %1 ms",)),
    "The run on hosts failed": ("Die Ausführung auf Hosts schlug fehl", "多主机运行失败"),
    "The run on hosts was cancelled on every rank": ("Die Ausführung auf Hosts wurde auf jedem Rang abgebrochen", "多主机运行已在每个 rank 上取消"),
    "Starting %n rank(s) with mpirun…": (
        ("Starte %n Rang mit mpirun…", "Starte %n Ränge mit mpirun…"),
        ("正在用 mpirun 启动 %n 个 rank…",)),
    "rank %1": ("Rang %1", "rank %1"),
    "rank %1 on %2": ("Rang %1 auf %2", "%2 上的 rank %1"),
    "Copy Plan as Command &Line": ("Plan als &Befehlszeile kopieren", "将计划复制为命令行(&L)"),
    "Copied: %1": ("Kopiert: %1", "已复制：%1"),
    "The placer run command that plans and runs what this window shows": (
        "Der placer-run-Befehl, der plant und ausführt, was dieses Fenster zeigt",
        "规划并运行此窗口所示内容的 placer run 命令"),
    "Select the ops to split first": ("Zuerst die aufzuteilenden Operatoren auswählen", "请先选择要拆分的算子"),
    "Remove split": ("Aufteilung entfernen", "移除拆分"),
    "Split Across Devices": ("Auf Geräte aufteilen", "跨设备拆分"),
    "Run the %n selected op(s) once per device, each device on its share of the batch. The batch is split where the region starts and concatenated where it ends.": (
        ("Den %n ausgewählten Operator einmal je Gerät ausführen, jedes Gerät auf seinem Anteil des Batches. Der Batch wird am Anfang des Bereichs aufgeteilt und an seinem Ende verkettet.",
         "Die %n ausgewählten Operatoren einmal je Gerät ausführen, jedes Gerät auf seinem Anteil des Batches. Der Batch wird am Anfang des Bereichs aufgeteilt und an seinem Ende verkettet."),
        ("将选中的 %n 个算子在每个设备上各运行一次，每个设备处理其所占的批次份额。批次在区域开始处拆分，在结束处拼接。",)),
    "Device": ("Gerät", "设备"),
    "Share": ("Anteil", "份额"),
    "Relative share of the batch's rows": ("Relativer Anteil an den Zeilen des Batches", "批次行数的相对份额"),
    "Split": ("Aufteilen", "拆分"),
    "Choose two devices or more.": ("Zwei oder mehr Geräte wählen.", "请选择两个或更多设备。"),
    "%1: rows %2–%3": ("%1: Zeilen %2–%3", "%1：第 %2–%3 行"),
    "Batch of %1 across %n op(s): %2.": (
        ("Batch von %1 über %n Operator: %2.", "Batch von %1 über %n Operatoren: %2."),
        ("%n 个算子上批次为 %1：%2。",)),
    "%n conflict(s); the first: %1": (
        ("%n Konflikt; der erste: %1", "%n Konflikte; der erste: %1"), ("%n 个冲突；第一个：%1",)),
    "Devices:": ("Geräte:", "设备："),
    "Shards:": ("Teile:", "分片："),
    "%1: rows %2–%3 of %4": ("%1: Zeilen %2–%3 von %4", "%1：第 %2–%3 行（共 %4 行）"),
    ", predicted %1": (", vorhergesagt %1", "，预测 %1"),
    "Split %n op(s) across %1": (
        ("%n Operator auf %1 aufteilen", "%n Operatoren auf %1 aufteilen"), ("将 %n 个算子拆分到 %1",)),
    "device copy %1": ("Gerätekopie %1", "设备拷贝 %1"),
    "Decide where each operator of a dataflow graph runs on a multi-device machine.": (
        "Entscheiden, wo jeder Operator eines Datenflussgraphen auf einer Maschine mit mehreren Geräten läuft.",
        "决定数据流图中每个算子在多设备机器上的运行位置。"),
    "A Relay, ONNX or JSON graph (default: the bundled example).": (
        "Ein Relay-, ONNX- oder JSON-Graph (Standard: das mitgelieferte Beispiel).",
        "Relay、ONNX 或 JSON 图（默认：自带示例）。"),
    "Write a PNG of the main window and exit.": ("Ein PNG des Hauptfensters schreiben und beenden.", "将主窗口保存为 PNG 后退出。"),
    "Virtual devices, NAME:KIND[:mem=SIZE],...": ("Virtuelle Geräte, NAME:ART[:mem=GRÖSSE],...", "虚拟设备，NAME:KIND[:mem=SIZE],..."),
    "Pin NODE=DEVICE (repeatable).": ("KNOTEN=GERÄT festlegen (wiederholbar).", "固定 NODE=DEVICE（可重复）。"),
    "Op rule OP=DEVICE (repeatable).": ("Operatorregel OP=GERÄT (wiederholbar).", "算子规则 OP=DEVICE（可重复）。"),
    "Fallback device for ops no rule covers.": ("Ausweichgerät für Operatoren ohne Regel.", "没有规则覆盖的算子的后备设备。"),
    "Planner mode: demand or unify.": ("Planermodus: demand oder unify.", "规划模式：demand 或 unify。"),
    "Run the plan before the screenshot: cuda devices on their GPU where this machine has it, the others on the host and virtual CPUs.": (
        "Den Plan vor dem Bildschirmfoto ausführen: cuda-Geräte auf ihrer GPU, wo dieser Rechner sie hat, die übrigen auf dem Host und virtuellen CPUs.",
        "截图前先运行计划：本机有 GPU 时 cuda 设备在其 GPU 上运行，其余设备在主机和虚拟 CPU 上运行。"),
    "Placement Explorer": ("Placement Explorer", "Placement Explorer"),
    "laying out": ("Layout läuft", "正在布局"),
    "Cancel layout": ("Layout abbrechen", "取消布局"),
    "Devices": ("Geräte", "设备"),
    "Op-name rules, one OP=DEVICE a line (globs, first match wins):": (
        "Regeln nach Operatorname, eine OP=GERÄT pro Zeile (Muster, der erste Treffer gilt):",
        "按算子名的规则，每行一个 OP=DEVICE（通配符，首个匹配生效）："),
    "Fallback device:": ("Ausweichgerät:", "后备设备："),
    "Apply rules": ("Regeln anwenden", "应用规则"),
    "Rules": ("Regeln", "规则"),
    "Conflicts": ("Konflikte", "冲突"),
    "Properties": ("Eigenschaften", "属性"),
    "<opened>": ("<geöffnet>", "<已打开>"),
    "History": ("Verlauf", "历史"),
    "Iterations:": ("Durchläufe:", "迭代次数："),
    "Warm-up:": ("Aufwärmen:", "预热："),
    "Run": ("Ausführen", "运行"),
    "Cancel": ("Abbrechen", "取消"),
    "<i>Runs execute the plan: cpu devices on the host, cuda devices on their GPU where this machine has one, the others on virtual CPUs. Per-node times overlay the graph, the timeline shows each device.</i>": (
        "<i>Läufe führen den Plan aus: cpu-Geräte auf dem Host, cuda-Geräte auf ihrer GPU, wo dieser Rechner eine hat, die übrigen auf virtuellen CPUs. Zeiten je Knoten erscheinen im Graphen, die Zeitleiste zeigt jedes Gerät.</i>",
        "<i>运行会执行计划：cpu 设备在主机上，本机有 GPU 时 cuda 设备在其 GPU 上，其余设备在虚拟 CPU 上。每个节点的耗时叠加在图上，时间线显示每个设备。</i>"),
    "Export trace…": ("Trace exportieren…", "导出跟踪…"),
    "Export CSV…": ("CSV exportieren…", "导出 CSV…"),
    "Export trace": ("Trace exportieren", "导出跟踪"),
    "Chrome trace (*.json)": ("Chrome-Trace (*.json)", "Chrome 跟踪 (*.json)"),
    "Export failed": ("Export fehlgeschlagen", "导出失败"),
    "Cannot write %1 (has the plan run?)": ("%1 kann nicht geschrieben werden (wurde der Plan ausgeführt?)", "无法写入 %1（计划运行过吗？）"),
    "Export timings": ("Zeiten exportieren", "导出耗时"),
    "CSV (*.csv)": ("CSV (*.csv)", "CSV (*.csv)"),
    "Timeline": ("Zeitleiste", "时间线"),
    "&File": ("&Datei", "文件(&F)"),
    "&Open…": ("&Öffnen…", "打开(&O)…"),
    "Open &Recent": ("&Zuletzt geöffnet", "最近打开(&R)"),
    "Open the &Example": ("&Beispiel öffnen", "打开示例(&E)"),
    "&Export": ("&Exportieren", "导出(&E)"),
    "Image (PNG)…": ("Bild (PNG)…", "图像 (PNG)…"),
    "Vector image (SVG)…": ("Vektorbild (SVG)…", "矢量图 (SVG)…"),
    "Relay text with placement…": ("Relay-Text mit Platzierung…", "带放置信息的 Relay 文本…"),
    "JSON graph…": ("JSON-Graph…", "JSON 图…"),
    "Plan report (JSON)…": ("Planbericht (JSON)…", "计划报告 (JSON)…"),
    "&Quit": ("&Beenden", "退出(&Q)"),
    "&Edit": ("&Bearbeiten", "编辑(&E)"),
    "&Undo": ("&Rückgängig", "撤销(&U)"),
    "&Redo": ("&Wiederholen", "重做(&R)"),
    "&Clear Pins of Selection": ("Festlegungen der Auswahl &entfernen", "清除所选节点的固定(&C)"),
    "&Find…": ("&Suchen…", "查找(&F)…"),
    "Find &Next": ("&Weitersuchen", "查找下一个(&N)"),
    "Find &Previous": ("&Rückwärts suchen", "查找上一个(&P)"),
    "&View": ("&Ansicht", "视图(&V)"),
    "&Fit to Window": ("An &Fenster anpassen", "适应窗口(&F)"),
    "Fit &Selection": ("&Auswahl einpassen", "适应所选(&S)"),
    "Zoom &In": ("Ver&größern", "放大(&I)"),
    "Zoom &Out": ("Ver&kleinern", "缩小(&O)"),
    "&Language": ("&Sprache", "语言(&L)"),
    "System Default": ("Systemvorgabe", "系统默认"),
    "The new language applies when Placement Explorer starts again.": (
        "Die neue Sprache gilt beim nächsten Start von Placement Explorer.", "新语言将在下次启动 Placement Explorer 时生效。"),
    "&Run": ("&Ausführen", "运行(&R)"),
    "&Run the Plan": ("Plan &ausführen", "运行计划(&R)"),
    "&Cancel the Run": ("Lauf a&bbrechen", "取消运行(&C)"),
    "Main": ("Haupt", "主工具栏"),
    "Planner: ": ("Planer: ", "规划器："),
    "demand": ("demand", "demand"),
    "unify (TVM)": ("unify (TVM)", "unify (TVM)"),
    "demand: unpinned nodes go where their consumers are; unify: nodes joined by hard edges share a device, as in TVM": (
        "demand: nicht festgelegte Knoten laufen dort, wo ihre Verbraucher sind; unify: durch harte Kanten verbundene Knoten teilen sich ein Gerät, wie in TVM",
        "demand：未固定的节点跟随其使用者；unify：由硬边相连的节点共享设备，与 TVM 相同"),
    "Find node, op or attribute (Ctrl+F)": ("Knoten, Operator oder Attribut suchen (Strg+F)", "查找节点、算子或属性 (Ctrl+F)"),
    "Cannot open %1": ("%1 kann nicht geöffnet werden", "无法打开 %1"),
    "%1 — Placement Explorer": ("%1 — Placement Explorer", "%1 — Placement Explorer"),
    "Cannot open the example": ("Das Beispiel kann nicht geöffnet werden", "无法打开示例"),
    "Open a graph": ("Graph öffnen", "打开图"),
    "Graphs (*.relay *.txt *.onnx *.json);;All files (*)": (
        "Graphen (*.relay *.txt *.onnx *.json);;Alle Dateien (*)", "图 (*.relay *.txt *.onnx *.json);;所有文件 (*)"),
    "Layout failed (%1); showing a simple ranked layout": (
        "Layout fehlgeschlagen (%1); ein einfaches Ebenenlayout wird gezeigt", "布局失败（%1）；显示简单的分层布局"),
    "Laid out in %1 s": ("Layout in %1 s", "布局用时 %1 秒"),
    # "Why is this here?": the nodes a device came from, as links.
    "Decided by:": ("Entschieden durch:", "决定来源："),
    "… %n more": (("… %n weiterer", "… %n weitere"), ("……另外 %n 个",)),
    # Opened groups as frames (views/CompoundLayout.h).
    "Laid out in %1 s (%2 of %3 levels; the others were kept from before)": (
        "Layout in %1 s (%2 von %3 Ebenen; die übrigen von vorher übernommen)",
        "布局用时 %1 秒（%3 层中的 %2 层；其余沿用之前的布局）"),
    "%1: %n node(s), open (double-click its title to collapse it)": (
        ("%1: %n Knoten, aufgeklappt (Doppelklick auf den Titel klappt zu)",
         "%1: %n Knoten, aufgeklappt (Doppelklick auf den Titel klappt zu)"),
        ("%1：%n 个节点，已展开（双击标题可折叠）",)),
    "Open this collapsed name scope as a frame (repeatable; with --screenshot).": (
        "Diesen zugeklappten Namensbereich als Rahmen öffnen (wiederholbar; mit --screenshot).",
        "将此折叠的名称作用域展开为框架（可重复；与 --screenshot 一起使用）。"),
    "Layout cancelled; showing a simple ranked layout": (
        "Layout abgebrochen; ein einfaches Ebenenlayout wird gezeigt", "布局已取消；显示简单的分层布局"),
    "Pin %1 to %2": ("%1 auf %2 festlegen", "将 %1 固定到 %2"),
    "Pin %n node(s) to %1": (("%n Knoten auf %1 festlegen", "%n Knoten auf %1 festlegen"), ("将 %n 个节点固定到 %1",)),
    "Clear %n pin(s)": (("%n Festlegung entfernen", "%n Festlegungen entfernen"), ("清除 %n 个固定",)),
    "No node matches '%1'": ("Kein Knoten passt zu „%1“", "没有节点匹配“%1”"),
    "No conflicts.": ("Keine Konflikte.", "没有冲突。"),
    "<i>Select a node to see its properties and why it runs where it does.</i>": (
        "<i>Einen Knoten auswählen, um seine Eigenschaften zu sehen und warum er dort läuft.</i>",
        "<i>选择一个节点以查看其属性以及它为何在该设备上运行。</i>"),
    "%n node(s) selected.": (("%n Knoten ausgewählt.", "%n Knoten ausgewählt."), ("已选择 %n 个节点。",)),
    "Device:": ("Gerät:", "设备："),
    "none": ("keines", "无"),
    "Why:": ("Warum:", "原因："),
    "Pinned:": ("Festgelegt:", "固定于："),
    "Inputs:": ("Eingänge:", "输入："),
    "Outputs:": ("Ausgänge:", "输出："),
    "Attributes:": ("Attribute:", "属性："),
    "%n copy(ies), %1 copied": (("%n Kopie, %1 kopiert", "%n Kopien, %1 kopiert"), ("%n 次拷贝，共 %1",)),
    "peak memory: %1": ("Spitzenspeicher: %1", "峰值内存：%1"),
    "%n conflict(s)": (("%n Konflikt", "%n Konflikte"), ("%n 个冲突",)),
    "waiting for %1": ("wartet auf %1", "等待 %1"),
    "idle %1 ms, waiting for %2": ("%1 ms untätig, wartet auf %2", "空闲 %1 毫秒，等待 %2"),
    "planned in %1 ms": ("geplant in %1 ms", "规划用时 %1 毫秒"),
    "%n node(s) folded at load": (("%n Knoten beim Laden gefaltet", "%n Knoten beim Laden gefaltet"),
                                  ("加载时折叠了 %n 个节点",)),
    "Input shapes for %1": ("Eingabeformen für %1", "%1 的输入形状"),
    "These inputs have symbolic dimensions. Give the shapes to plan for; symbolic dimensions left at 1 are planned as 1.": (
        "Diese Eingaben haben symbolische Dimensionen. Geben Sie die Formen an, für die geplant "
        "wird; symbolische Dimensionen, die bei 1 bleiben, werden als 1 geplant.",
        "这些输入含有符号维度。请给出用于规划的形状；保留为 1 的符号维度按 1 规划。"),
    "Declared: [%1]": ("Deklariert: [%1]", "声明：[%1]"),
    "%1 [%2]": ("%1 [%2]", "%1 [%2]"),
    "%1 has %2 dimensions": ("%1 hat %2 Dimensionen", "%1 有 %2 个维度"),
    "Open": ("Öffnen", "打开"),
    "(none)": ("(keines)", "（无）"),
    "Bad rule": ("Ungültige Regel", "无效规则"),
    "'%1' is not of the form OP=DEVICE": ("„%1“ hat nicht die Form OP=GERÄT", "“%1”不是 OP=DEVICE 的形式"),
    "'%1' names unknown device '%2'": ("„%1“ nennt das unbekannte Gerät „%2“", "“%1”引用了未知设备“%2”"),
    "PNG image (*.png)": ("PNG-Bild (*.png)", "PNG 图像 (*.png)"),
    "SVG image (*.svg)": ("SVG-Bild (*.svg)", "SVG 图像 (*.svg)"),
    "Relay text (*.relay)": ("Relay-Text (*.relay)", "Relay 文本 (*.relay)"),
    "JSON graph (*.json)": ("JSON-Graph (*.json)", "JSON 图 (*.json)"),
    "Plan report (*.json)": ("Planbericht (*.json)", "计划报告 (*.json)"),
    "Export": ("Exportieren", "导出"),
    "Cannot export Relay": ("Relay-Export nicht möglich", "无法导出 Relay"),
    "'%1' is not a Relay operator; export a JSON graph instead.": (
        "„%1“ ist kein Relay-Operator; stattdessen einen JSON-Graphen exportieren", "“%1”不是 Relay 算子；请改为导出 JSON 图"),
    "Cannot write %1": ("%1 kann nicht geschrieben werden", "无法写入 %1"),
    "Exported %1": ("%1 exportiert", "已导出 %1"),
    "Cannot run": ("Ausführen nicht möglich", "无法运行"),
    "<i>Running…</i>": ("<i>Läuft…</i>", "<i>正在运行…</i>"),
    "<i>The run was cancelled.</i>": ("<i>Der Lauf wurde abgebrochen.</i>", "<i>运行已取消。</i>"),
    "The run failed": ("Der Lauf ist fehlgeschlagen", "运行失败"),
    "%1 compute": ("%1 Rechnen", "%1 计算"),
    "%1 (%2) on %3 [%4]: %5 ms": ("%1 (%2) auf %3 [%4]: %5 ms", "%1 (%2) 在 %3 [%4] 上：%5 毫秒"),
    "copies %1 → %2": ("Kopien %1 → %2", "拷贝 %1 → %2"),
    "copy %1, %2: %3 ms": ("Kopie %1, %2: %3 ms", "拷贝 %1，%2：%3 毫秒"),
    "inputs → %1": ("Eingaben → %1", "输入 → %1"),
    "input %1: %2 ms": ("Eingabe %1: %2 ms", "输入 %1：%2 毫秒"),
    "<p><b>Latency</b> %1 ms median (min %2, max %3) over %n iteration(s)</p>": (
        ("<p><b>Latenz</b> %1 ms Median (min. %2, max. %3) über %n Durchlauf</p>",
         "<p><b>Latenz</b> %1 ms Median (min. %2, max. %3) über %n Durchläufe</p>"),
        ("<p><b>延迟</b> 中位数 %1 毫秒（最小 %2，最大 %3），共 %n 次迭代</p>",)),
    "device": ("Gerät", "设备"),
    "runs on": ("läuft auf", "运行于"),
    "busy": ("belegt", "忙碌"),
    "measured": ("gemessen", "实测"),
    "memory": ("Speicher", "内存"),
    "<p>Outputs match the single-device reference (max abs diff %1).</p>": (
        "<p>Die Ausgaben stimmen mit der Referenz auf einem Gerät überein (max. abs. Abweichung %1).</p>",
        "<p>输出与单设备参考结果一致（最大绝对误差 %1）。</p>"),
    "<p style='color:#b01010'>Outputs differ from the single-device reference: %1</p>": (
        "<p style='color:#b01010'>Die Ausgaben weichen von der Referenz auf einem Gerät ab: %1</p>",
        "<p style='color:#b01010'>输出与单设备参考结果不一致：%1</p>"),
    "Run finished: %1 ms median": ("Lauf beendet: %1 ms Median", "运行完成：中位数 %1 毫秒"),
    "Planner mode: demand": ("Planermodus: demand", "规划模式：demand"),
    "Planner mode: unify": ("Planermodus: unify", "规划模式：unify"),
    "Change rules": ("Regeln ändern", "更改规则"),
    "Drag onto a node, or onto a selected node to place the whole selection, to run it on %1": (
        "Auf einen Knoten ziehen – oder auf einen ausgewählten Knoten für die ganze Auswahl –, um ihn auf %1 auszuführen",
        "拖到一个节点上（或拖到已选中的节点上以放置整个选区），使其在 %1 上运行"),
    "default": ("Standard", "默认"),
    "host": ("Host", "主机"),
    "%n node(s)": (("%n Knoten", "%n Knoten"), ("%n 个节点",)),
    "Virtual devices are what plans name; each runs on a physical device when the plan runs (cpu, vcpuN, cuda:N).": (
        "Pläne nennen virtuelle Geräte; jedes läuft beim Ausführen auf einem physischen Gerät (cpu, vcpuN, cuda:N).",
        "计划使用虚拟设备；运行时每个虚拟设备映射到一个物理设备（cpu、vcpuN、cuda:N）。"),
    "Name": ("Name", "名称"),
    "Plans": ("Pläne", "计划"),
    "Netron: ONNX model annotated with placement and times…": ("Netron: ONNX-Modell mit Platzierung und Zeiten…", "Netron：带放置与耗时注释的 ONNX 模型…"),
    "ONNX model (*.onnx)": ("ONNX-Modell (*.onnx)", "ONNX 模型 (*.onnx)"),
    "Netron annotations need a model read from ONNX; export a JSON graph or the plan report instead.": (
        "Netron-Anmerkungen brauchen ein aus ONNX gelesenes Modell; stattdessen einen JSON-Graphen oder den Planbericht exportieren.",
        "Netron 注释需要从 ONNX 读取的模型；请改为导出 JSON 图或计划报告。"),
    "<p>Last runs: %1 ms → %2 ms (%3 on %4, %5 on %6)</p>": ("<p>Letzte Läufe: %1 ms → %2 ms (%3 auf %4, %5 auf %6)</p>", "<p>最近运行：%1 毫秒 → %2 毫秒（%3 在 %4，%5 在 %6）</p>"),
    "<p><b>Largest changes in node time</b><br>": ("<p><b>Größte Änderungen der Knotenzeiten</b><br>", "<p><b>节点耗时变化最大的</b><br>"),
    "<p>Run both plans to compare their latency.</p>": ("<p>Beide Pläne ausführen, um ihre Latenz zu vergleichen.</p>", "<p>运行两个计划以比较其延迟。</p>"),
    "Rename plan": ("Plan umbenennen", "重命名计划"),
    "New name:": ("Neuer Name:", "新名称："),
    "Duplicate plan": ("Plan duplizieren", "复制计划"),
    "Name of the copy:": ("Name der Kopie:", "副本名称："),
    " copy": (" Kopie", " 副本"),
    "Delete plan": ("Plan löschen", "删除计划"),
    "Delete the plan '%1' and its runs?": ("Den Plan „%1“ und seine Läufe löschen?", "删除计划“%1”及其运行记录？"),
    "Compare plans": ("Pläne vergleichen", "比较计划"),
    "&Save Plan": ("Plan &speichern", "保存计划(&S)"),
    "Save Plan &As…": ("Plan speichern &unter…", "计划另存为(&A)…"),
    "Save plan as": ("Plan speichern unter", "计划另存为"),
    "Plan name:": ("Planname:", "计划名称："),
    "Open &Workspace…": ("&Arbeitsbereich öffnen…", "打开工作区(&W)…"),
    "Workspace": ("Arbeitsbereich", "工作区"),
    "Workspaces (*.db);;All files (*)": ("Arbeitsbereiche (*.db);;Alle Dateien (*)", "工作区 (*.db);;所有文件 (*)"),
    "%1[*] — Placement Explorer": ("%1[*] — Placement Explorer", "%1[*] — Placement Explorer"),
    "Workspace: %1": ("Arbeitsbereich: %1", "工作区：%1"),
    "Save plan": ("Plan speichern", "保存计划"),
    "Cannot save the plan": ("Der Plan kann nicht gespeichert werden", "无法保存计划"),
    "No workspace is open (File ▸ Open Workspace).": ("Kein Arbeitsbereich ist geöffnet (Datei ▸ Arbeitsbereich öffnen).", "没有打开的工作区（文件 ▸ 打开工作区）。"),
    "Saved plan '%1'": ("Plan „%1“ gespeichert", "已保存计划“%1”"),
    "Cannot open the plan": ("Der Plan kann nicht geöffnet werden", "无法打开计划"),
    "plan %1": ("Plan %1", "计划 %1"),
    "The planner answers differently now": ("Der Planer antwortet jetzt anders", "规划器现在给出不同的结果"),
    "Since '%1' was saved, the planner's answer changed:\n%2": ("Seit „%1“ gespeichert wurde, hat sich die Antwort des Planers geändert:\n%2", "自“%1”保存以来，规划器的结果发生了变化：\n%2"),
    "Cannot rename the plan": ("Der Plan kann nicht umbenannt werden", "无法重命名计划"),
    "Cannot duplicate the plan": ("Der Plan kann nicht dupliziert werden", "无法复制计划"),
    "Cannot delete the plan": ("Der Plan kann nicht gelöscht werden", "无法删除计划"),
    "<h3>%1 → %2</h3>": ("<h3>%1 → %2</h3>", "<h3>%1 → %2</h3>"),
    "<p>%n node(s) moved; ": (("<p>%n Knoten verschoben; ", "<p>%n Knoten verschoben; "), ("<p>移动了 %n 个节点；",)),
    "copies: %1 added, %2 removed; bytes copied %3 → %4.</p>": ("Kopien: %1 hinzu, %2 entfallen; kopierte Bytes %3 → %4.</p>", "拷贝：新增 %1，移除 %2；拷贝字节 %3 → %4。</p>"),
    "<p>Last run of %1: %2 ms</p>": ("<p>Letzter Lauf von %1: %2 ms</p>", "<p>%1 的最近一次运行：%2 毫秒</p>"),
    "… and %1 more": ("… und %1 weitere", "……还有 %1 项"),
    "Moved": ("Verschoben", "已移动"),
    "Copies added": ("Neue Kopien", "新增拷贝"),
    "Copies removed": ("Entfallene Kopien", "移除的拷贝"),
    "Unsaved plan": ("Ungespeicherter Plan", "未保存的计划"),
    "The plan has changes that are not saved. Save them in the workspace?": ("Der Plan hat ungespeicherte Änderungen. Im Arbeitsbereich speichern?", "计划有未保存的更改。要保存到工作区吗？"),
    "Plan": ("Plan", "计划"),
    "Graph": ("Graph", "图"),
    "Copies": ("Kopien", "拷贝"),
    "Copied": ("Kopiert", "已拷贝"),
    "Last run": ("Letzter Lauf", "最近运行"),
    "Updated": ("Geändert", "更新时间"),
    "Open": ("Öffnen", "打开"),
    "Rename…": ("Umbenennen…", "重命名…"),
    "Duplicate…": ("Duplizieren…", "复制…"),
    "Delete…": ("Löschen…", "删除…"),
    "Compare": ("Vergleichen", "比较"),
    "Select two plans to compare them.": ("Zwei Pläne zum Vergleichen auswählen.", "选择两个计划以进行比较。"),
    "Select one plan.": ("Einen Plan auswählen.", "选择一个计划。"),
    "Collapse the top-level name scopes into groups.": (
        "Die obersten Namensbereiche zu Gruppen zuklappen.", "将顶层名称作用域折叠为分组。"),
    "&Collapse Groups": ("Gruppen &zuklappen", "折叠分组(&C)"),
    "E&xpand All Groups": ("Alle Gruppen &aufklappen", "展开所有分组(&X)"),
    "Expand %1": ("%1 aufklappen", "展开 %1"),
    "Collapse %1": ("%1 zuklappen", "折叠 %1"),
    "Collapse": ("Zuklappen", "折叠"),
    "%1: %n node(s), collapsed (double-click or the context menu expands it)": (
        ("%1: %n Knoten, zugeklappt (Doppelklick oder Kontextmenü klappt auf)",
         "%1: %n Knoten, zugeklappt (Doppelklick oder Kontextmenü klappt auf)"),
        ("%1：%n 个节点，已折叠（双击或右键菜单展开）",)),
    "%n pin(s)": (("%n Festlegung", "%n Festlegungen"), ("%n 个固定",)),
    "Pin to": ("Festlegen auf", "固定到"),
    "Clear Pin": ("Festlegung entfernen", "清除固定"),
    "Fit Selection": ("Auswahl einpassen", "适应所选"),
    "loading": ("lädt", "正在加载"),
    "Reading %1…": ("%1 wird gelesen…", "正在读取 %1…"),
    "Showing a quick layout while Graphviz lays out %n node(s)…": (
        ("Ein schnelles Layout wird gezeigt, während Graphviz %n Knoten anordnet…",
         "Ein schnelles Layout wird gezeigt, während Graphviz %n Knoten anordnet…"),
        ("Graphviz 正在布局 %n 个节点，先显示快速布局…",)),
    "Model Explorer overlay: devices…": ("Model-Explorer-Overlay: Geräte…", "Model Explorer 叠加层：设备…"),
    "Model Explorer overlay: run times…": ("Model-Explorer-Overlay: Laufzeiten…", "Model Explorer 叠加层：运行时间…"),
    "Model Explorer node data (*.json)": ("Model-Explorer-Knotendaten (*.json)", "Model Explorer 节点数据 (*.json)"),
    "Nothing to export": ("Nichts zu exportieren", "没有可导出的内容"),
    "Run the plan first (Run ▸ Run the Plan).": ("Zuerst den Plan ausführen (Ausführen ▸ Plan ausführen).", "请先运行计划（运行 ▸ 运行计划）。"),
    "Kind": ("Art", "类型"),
    "Memory capacity": ("Speicherkapazität", "内存容量"),
    "Runs on": ("Läuft auf", "运行于"),
    "runs on %1": ("läuft auf %1", "运行于 %1"),
    "Colour": ("Farbe", "颜色"),
    "Add": ("Hinzufügen", "添加"),
    "Remove": ("Entfernen", "删除"),
    "Default device (unconstrained work):": ("Standardgerät (ungebundene Arbeit):", "默认设备（无约束的工作）："),
    "Host device (host-only ops):": ("Host-Gerät (Nur-Host-Operatoren):", "主机设备（仅主机算子）："),
    "(automatic)": ("(automatisch)", "（自动）"),
    "double-click": ("Doppelklick", "双击"),
    "row %1: a device needs a name without spaces, ':', ',' or '='": (
        "Zeile %1: ein Gerät braucht einen Namen ohne Leerzeichen, „:“, „,“ oder „=“",
        "第 %1 行：设备名称不能包含空格、“:”、“,”或“=”"),
    "two devices are called '%1'": ("zwei Geräte heißen „%1“", "有两个设备都叫“%1”"),
    "'%1': memory capacity '%2' is not a size such as 8GiB or 512MB": (
        "„%1“: Speicherkapazität „%2“ ist keine Größe wie 8GiB oder 512MB",
        "“%1”：内存容量“%2”不是 8GiB 或 512MB 这样的大小"),
    "a plan needs at least one device": ("ein Plan braucht mindestens ein Gerät", "计划至少需要一个设备"),
    "&Devices": ("&Geräte", "设备(&D)"),
    "&Edit Devices…": ("Geräte &bearbeiten…", "编辑设备(&E)…"),
    "Edit devices": ("Geräte bearbeiten", "编辑设备"),
    "'%1' cannot be removed: device_copy %2 in the model names it": (
        "„%1“ kann nicht entfernt werden: device_copy %2 im Modell nennt es",
        "无法删除“%1”：模型中的 device_copy %2 引用了它"),
    "'%1' cannot be removed: a result of the model must be on it": (
        "„%1“ kann nicht entfernt werden: ein Ergebnis des Modells muss dort liegen",
        "无法删除“%1”：模型的一个结果必须位于该设备"),
    "devices named by device_copy nodes must keep their place in the list": (
        "von device_copy-Knoten genannte Geräte müssen ihren Platz in der Liste behalten",
        "被 device_copy 节点引用的设备必须保持其在列表中的位置"),
    "devices that results must be on must keep their place in the list": (
        "Geräte, auf denen Ergebnisse liegen müssen, müssen ihren Platz in der Liste behalten",
        "结果所在的设备必须保持其在列表中的位置"),
    "Run the plan (Run ▸ Run) to see when each device works.": (
        "Den Plan ausführen (Ausführen ▸ Ausführen), um zu sehen, wann jedes Gerät arbeitet.",
        "运行计划（运行 ▸ 运行）以查看每个设备何时工作。"),
    "Cannot write %1: %2": ("%1 kann nicht geschrieben werden: %2", "无法写入 %1：%2"),
    "There are no run times to export: run the plan first (Run ▸ Run the Plan).": (
        "Es gibt keine Laufzeiten zum Exportieren: zuerst den Plan ausführen (Ausführen ▸ Den Plan ausführen).",
        "没有可导出的运行时间：请先运行计划（运行 ▸ 运行计划）。"),
    "Unknown export '%1'.": ("Unbekannter Export „%1“.", "未知的导出类型“%1”。"),
    "<b>To place work</b>, drag a device chip from the <i>Devices</i> panel onto a node (or onto a selection). The planner re-infers everything else at once: fills show each node's device, dots mark pins, badges on edges are the copies the plan needs, and <i>Conflicts and notes</i> says what it decided. Ctrl+Z undoes.": (
        "<b>Arbeit verteilen:</b> einen Geräte-Chip aus dem Bereich <i>Geräte</i> auf einen Knoten ziehen (oder auf eine Auswahl). Der Planer leitet alles andere sofort neu ab: Die Füllfarbe zeigt das Gerät jedes Knotens, Punkte markieren Festlegungen, Plaketten an Kanten sind die Kopien, die der Plan braucht, und <i>Konflikte und Hinweise</i> sagt, was er entschieden hat. Strg+Z macht rückgängig.",
        "<b>分配工作：</b>把<i>设备</i>面板中的设备标签拖到一个节点（或一组选中的节点）上。规划器会立即重新推断其余部分：填充色表示每个节点的设备，圆点标记固定，边上的徽标是计划需要的拷贝，<i>冲突与说明</i>给出它的决定。Ctrl+Z 撤销。"),
    "Conflicts and notes": ("Konflikte und Hinweise", "冲突与说明"),
    "Note: %1": ("Hinweis: %1", "说明：%1"),
    "Hide this hint": ("Diesen Hinweis ausblenden", "隐藏此提示"),
    "Cannot record the run": ("Der Lauf kann nicht aufgezeichnet werden", "无法记录此次运行"),
    "Input format: relay, json, onnx or auto.": (
        "Eingabeformat: relay, json, onnx oder auto.", "输入格式：relay、json、onnx 或 auto。"),
    "Where unconstrained work goes.": ("Wohin nicht festgelegte Arbeit geht.", "未受约束的工作去往的设备。"),
    "Where host-only ops run.": ("Wo Operatoren laufen, die nur auf dem Host laufen.", "仅限主机的算子运行的设备。"),
    "Pin NODE=DEVICE, result included (repeatable).": (
        "KNOTEN=GERÄT festlegen, samt Ergebnis (wiederholbar).", "固定 NODE=DEVICE，包括其结果（可重复）。"),
    "Constants on several devices: replicate or copy.": (
        "Konstanten auf mehreren Geräten: replicate oder copy.", "多个设备上的常量：replicate 或 copy。"),
    " (fused, %n more)": ((" (fusioniert, %n weiterer)", " (fusioniert, %n weitere)"), ("（已融合，另有 %n 个）",)),
    "fused into %1": ("in %1 fusioniert", "已融合进 %1"),
    "predicted latency: %1": ("vorhergesagte Latenz: %1", "预测延迟：%1"),
    "predicting…": ("Vorhersage läuft…", "正在预测…"),
    "&Calibrate This Machine…": ("Diese Maschine &kalibrieren…", "校准本机(&C)…"),
    "Calibrate this machine?": ("Diese Maschine kalibrieren?", "校准本机？"),
    "Auto placement predicts each op's time from the devices' speed. This machine has not been measured yet, so it assumes typical figures. Measure its devices now? It takes a few seconds; Devices ▸ Calibrate does it later.": (
        "Die automatische Platzierung sagt die Zeit jedes Operators aus der Geschwindigkeit der Geräte vorher. Diese Maschine wurde noch nicht vermessen, daher werden typische Werte angenommen. Ihre Geräte jetzt vermessen? Das dauert einige Sekunden; Geräte ▸ Kalibrieren erledigt es später.",
        "自动放置根据设备速度预测每个算子的时间。本机尚未测量，因此使用典型数值。现在测量其设备吗？需要几秒钟；也可以稍后通过“设备 ▸ 校准”进行。"),
    "Calibrate": ("Kalibrieren", "校准"),
    "No workspace is open to keep it in.": ("Kein Arbeitsbereich ist geöffnet, um es zu speichern.", "没有打开的工作区可供保存。"),
    "Measuring this machine's devices…": ("Die Geräte dieser Maschine werden vermessen…", "正在测量本机设备…"),
    "Calibration failed: %1": ("Kalibrierung fehlgeschlagen: %1", "校准失败：%1"),
    "Calibrated %1: auto placement now uses its measured rates": (
        "%1 kalibriert: die automatische Platzierung nutzt jetzt die gemessenen Werte", "已校准 %1：自动放置现在使用实测数值"),
    "Run finished: %1 ms median; predicted %2 ms (%3%4 %)": (
        "Lauf beendet: %1 ms Median; vorhergesagt %2 ms (%3%4 %)", "运行完成：中位数 %1 ms；预测 %2 ms（%3%4 %）"),
    "Auto-place": ("Automatisch platzieren", "自动放置"),
    "loading weights %p%": ("Gewichte werden geladen %p%", "正在加载权重 %p%"),
    "%p%": ("%p%", "%p%"),
    "%1 predicted": ("%1 vorhergesagt", "%1 预测"),
    "%1 (%2) on %3: %4 predicted%5": ("%1 (%2) auf %3: %4 vorhergesagt%5", "%1（%2）在 %3 上：预测 %4%5"),
    " (from earlier runs)": (" (aus früheren Läufen)", "（来自之前的运行）"),
    "&Pin Selection To": ("Auswahl &anheften an", "将所选固定到(&P)"),
    "Device %1": ("Gerät %1", "设备 %1"),
    "Device %1 (none)": ("Gerät %1 (keines)", "设备 %1（无）"),
    "There is no device %1: the palette has %n device(s)": (
        ("Es gibt kein Gerät %1: die Palette hat %n Gerät", "Es gibt kein Gerät %1: die Palette hat %n Geräte"),
        ("没有设备 %1：调色板中有 %n 个设备",)),
    "Select the nodes to pin first": ("Zuerst die anzuheftenden Knoten auswählen", "请先选择要固定的节点"),
    "<p>Note: %1</p>": ("<p>Hinweis: %1</p>", "<p>注意：%1</p>"),
    "<p>Optimised: %1</p>": ("<p>Optimiert: %1</p>", "<p>已优化：%1</p>"),
    " ms": (" ms", " ms"),
    "none": ("keine", "无"),
    "<p>Predicted: %1 → %2; measured: %3 ms → %4 ms</p>": (
        "<p>Vorhergesagt: %1 → %2; gemessen: %3 ms → %4 ms</p>", "<p>预测：%1 → %2；实测：%3 ms → %4 ms</p>"),
    "Cannot keep the run's node times": ("Die Knotenzeiten des Laufs können nicht gespeichert werden", "无法保存本次运行的节点时间"),
    "Runs as one op on its device; body collapsed:": (
        "Läuft als ein Operator auf seinem Gerät; Rumpf eingeklappt:", "作为一个算子在其设备上运行；主体已折叠："),
    "auto-place": ("automatisch", "自动放置"),
    "demand: unpinned nodes go where their consumers are; unify: nodes joined by hard edges share a device, as in TVM; auto-place: unpinned ops go where the cost model predicts the shortest latency, pins and rules kept": (
        "demand: nicht festgelegte Knoten gehen dorthin, wo ihre Verbraucher sind; unify: durch harte Kanten verbundene Knoten teilen sich ein Gerät, wie in TVM; automatisch: nicht festgelegte Operatoren gehen dorthin, wo das Kostenmodell die kürzeste Latenz vorhersagt, Festlegungen und Regeln bleiben",
        "demand：未固定的节点放在其使用者所在处；unify：由硬边相连的节点共享设备，与 TVM 相同；自动放置：未固定的算子放在代价模型预测延迟最短的设备上，保留固定和规则"),
    "Predicted:": ("Vorhergesagt:", "预测："),
    "from": ("von", "从"),
    " (roofline estimate)": (" (Roofline-Schätzung)", "（Roofline 估计）"),
    "Bodies (collapsed; they run on this node's device):": (
        "Rümpfe (eingeklappt; sie laufen auf dem Gerät dieses Knotens):", "主体（已折叠；在此节点的设备上运行）："),
    # The Run panel's inputs: data a run brings, planned for when it starts.
    "Input": ("Eingabe", "输入"),
    "Data": ("Daten", "数据"),
    "Data for each input: a .npy file, a shape such as 2,16,64 for random data at that shape, or nothing for random data at the planned shape. Other shapes are planned for when the run starts.": (
        "Daten für jede Eingabe: eine .npy-Datei, eine Form wie 2,16,64 für Zufallsdaten dieser Form oder nichts für Zufallsdaten in der geplanten Form. Andere Formen werden beim Start des Laufs eingeplant.",
        "每个输入的数据：一个 .npy 文件、一个形状（如 2,16,64，生成该形状的随机数据），或留空（按规划形状生成随机数据）。其他形状会在运行开始时重新规划。"),
    ".npy…": (".npy…", ".npy…"),
    "Choose a .npy file for the selected input": (
        "Eine .npy-Datei für die ausgewählte Eingabe wählen", "为所选输入选择 .npy 文件"),
    "Data for an input": ("Daten für eine Eingabe", "输入数据"),
    "NumPy arrays (*.npy)": ("NumPy-Arrays (*.npy)", "NumPy 数组 (*.npy)"),
    "Planned as %1": ("Geplant als %1", "规划为 %1"),
    "Input %1: %2": ("Eingabe %1: %2", "输入 %1：%2"),
    "Input %1: '%2' is neither a .npy file nor a shape such as 2,16,64": (
        "Eingabe %1: „%2“ ist weder eine .npy-Datei noch eine Form wie 2,16,64",
        "输入 %1：“%2”既不是 .npy 文件，也不是 2,16,64 这样的形状"),
    "size at run time": ("Größe zur Laufzeit", "运行时大小"),
}


def fill(path, column):
    tree = ET.parse(path)
    missing = 0
    for message in tree.getroot().iter("message"):
        source = message.find("source").text
        translation = message.find("translation")
        entry = T.get(source)
        if entry is None:
            missing += 1
            continue
        value = entry[column]
        for child in list(translation):
            translation.remove(child)
        translation.attrib.pop("type", None)
        translation.text = None
        if message.get("numerus") == "yes":
            forms = value if isinstance(value, tuple) else (value,)
            for form in forms:
                ET.SubElement(translation, "numerusform").text = form
        else:
            translation.text = value if isinstance(value, str) else value[0]
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return missing


def english_plurals(source):
    """The singular and plural of a source text that spells its plural "node(s)", "copy(ies)"."""
    plural = source.replace("y(ies)", "ies").replace("(es)", "es").replace("(s)", "s")
    singular = source.replace("y(ies)", "y").replace("(es)", "").replace("(s)", "")
    return (singular, plural)


def fill_english(path):
    """English needs only its plurals: every numerus message gets its two forms."""
    tree = ET.parse(path)
    for message in tree.getroot().iter("message"):
        if message.get("numerus") != "yes":
            continue
        translation = message.find("translation")
        for child in list(translation):
            translation.remove(child)
        translation.attrib.pop("type", None)
        translation.text = None
        for form in english_plurals(message.find("source").text):
            ET.SubElement(translation, "numerusform").text = form
    tree.write(path, encoding="utf-8", xml_declaration=True)


if __name__ == "__main__":
    folder = os.path.dirname(os.path.abspath(__file__))
    for name, column in (("placement_explorer_de.ts", 0), ("placement_explorer_zh_CN.ts", 1)):
        missing = fill(os.path.join(folder, name), column)
        print(f"{name}: {missing} string(s) without a translation", file=sys.stderr)
    fill_english(os.path.join(folder, "placement_explorer_en.ts"))
